//! The element types a typed tensor can hold, each with its spec dtype: a leaf that the
//! tensors, the views and the launch arguments name without depending on one another.

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

use crate::contract::DType;

/// An element type a kernel can take, with its spec dtype.
pub trait Element: DeviceRepr + ValidAsZeroBits + Copy + Default + 'static {
    const DTYPE: DType;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {
        $(impl Element for $t { const DTYPE: DType = DType::$d; })*
    };
}

element! {
    f32 => F32, f64 => F64, half::f16 => F16, half::bf16 => BF16,
    i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64, u64 => U64,
    float8::F8E4M3 => E4M3, float8::F8E5M2 => E5M2,
}
