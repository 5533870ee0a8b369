//! The values a kernel receives, in the ABI order its contract defines
//! (`KernelContract::entry_params`, ima-contract's abi.rs): each buffer's pointer and its
//! strides (and a `tma` argument's tensor map), the symbols, the scalar params; the
//! violation record, where the entry point takes one, comes last and is pushed by the
//! caller.
//!
//! One list serves both ways a kernel is started: [`crate::Kernel::launch`] pushes it into
//! cudarc's launch builder, and a graph's kernel node ([`crate::graph`]) points the
//! driver's `kernelParams` array into it. So a direct launch and a graph node cannot
//! disagree on the order or the types of what the kernel receives.

use std::ffi::c_void;

use cudarc::driver::{LaunchArgs, PushKernelArg};
use smallvec::SmallVec;

use crate::capacity::{ABI_VALUES, ARGS};
use crate::check::{Checked, IndexWidth, TensorMeta, view_address};
use crate::contract::{EntryParam, KernelContract, Scalar, TmaLayout};
use crate::error::Error;
use crate::tensor_map::{TensorMap, encode, quant_group};

/// One value a kernel receives.
#[derive(Debug, Clone)]
pub(crate) enum AbiValue {
    /// A buffer's address, at the view's first element.
    Ptr(u64),
    /// A stride or a symbol, in the 32-bit entry point's index type.
    I32(i32),
    /// A stride or a symbol, in the 64-bit entry point's index type.
    I64(i64),
    /// A scalar param, in its declared type.
    Param(Scalar),
    /// A `tma` argument's tensor map, 128 bytes passed by value. Boxed, so that the other
    /// values stay small: a launch of a kernel with tensor maps allocates them, no other.
    TensorMap(Box<TensorMap>),
}

pub(crate) type AbiValues = SmallVec<[AbiValue; ABI_VALUES]>;

impl AbiValue {
    /// Pushes the value into a launch builder, which reads it when the launch is enqueued.
    pub(crate) fn push<'a>(&'a self, builder: &mut LaunchArgs<'a>) {
        match self {
            AbiValue::Ptr(p) => builder.arg(p),
            AbiValue::I32(v) => builder.arg(v),
            AbiValue::I64(v) => builder.arg(v),
            AbiValue::Param(Scalar::F32(v)) => builder.arg(v),
            AbiValue::Param(Scalar::F64(v)) => builder.arg(v),
            AbiValue::Param(Scalar::I32(v)) => builder.arg(v),
            AbiValue::Param(Scalar::U32(v)) => builder.arg(v),
            AbiValue::Param(Scalar::I64(v)) => builder.arg(v),
            AbiValue::Param(Scalar::U64(v)) => builder.arg(v),
            AbiValue::TensorMap(m) => builder.arg(&**m),
        };
    }

    /// The address of the value itself, for a `kernelParams` array: the driver reads the
    /// parameter's size from it (4 bytes for `i32`, `u32` and `f32`, 128 for a tensor map, else
    /// 8), so each points at the payload of its own type, never at the enum.
    pub(crate) fn param_ptr(&self) -> *mut c_void {
        fn at<T>(v: &T) -> *mut c_void {
            (v as *const T).cast_mut().cast()
        }
        match self {
            AbiValue::Ptr(p) => at(p),
            AbiValue::I32(v) => at(v),
            AbiValue::I64(v) => at(v),
            AbiValue::Param(Scalar::F32(v)) => at(v),
            AbiValue::Param(Scalar::F64(v)) => at(v),
            AbiValue::Param(Scalar::I32(v)) => at(v),
            AbiValue::Param(Scalar::U32(v)) => at(v),
            AbiValue::Param(Scalar::I64(v)) => at(v),
            AbiValue::Param(Scalar::U64(v)) => at(v),
            AbiValue::TensorMap(m) => at(&**m),
        }
    }
}

/// Every value a launch of `c` that passed its checks (`plan`) passes to the kernel, but
/// the record. Pointers are the views' addresses as the checks judged them (the buffer's
/// address in `metas` plus the view's offset); a logical argument has no pointer and its
/// strides are not passed.
pub(crate) fn abi_values(
    c: &KernelContract,
    plan: &Checked,
    metas: &[TensorMeta<'_>],
    params: &[Scalar],
) -> Result<AbiValues, Error> {
    let index = |x: i64| match plan.index {
        IndexWidth::I64 => Ok(AbiValue::I64(x)),
        IndexWidth::I32 => i32::try_from(x)
            .map(AbiValue::I32)
            .map_err(|_| Error::Internal(format!("{}: a 32-bit index overflowed", c.name))),
    };
    // `plan.values` holds every argument's strides in order, then the symbols: where each
    // argument's strides start, and where the symbols do.
    let mut first_stride: SmallVec<[usize; ARGS]> = SmallVec::new();
    let mut symbols_at = 0;
    for a in c.args {
        first_stride.push(symbols_at);
        symbols_at += a.dims.len();
    }
    let mut out = AbiValues::new();
    // The order is the contract's one definition, from which codegen wrote the entry
    // points' parameter lists.
    for param in c.entry_params(false) {
        out.push(match param {
            // Checked: the view lies inside its buffer, so its address fits a u64.
            EntryParam::Pointer { arg } => AbiValue::Ptr(view_address(&metas[arg]) as u64),
            EntryParam::Stride { arg, dim } => index(plan.values[first_stride[arg] + dim])?,
            EntryParam::Symbol(s) => index(plan.values[symbols_at + s])?,
            EntryParam::TensorMap { arg } => {
                let a = &c.args[arg];
                let b = a.tma.ok_or_else(|| {
                    Error::Internal(format!(
                        "{}: {} has a tensor map but no box",
                        c.name, a.name
                    ))
                })?;
                let group = (b.layout == TmaLayout::Groups)
                    .then(|| quant_group(c, metas, arg))
                    .flatten();
                AbiValue::TensorMap(Box::new(encode(c.name, a, &metas[arg], b, group)?))
            }
            EntryParam::Param(p) => AbiValue::Param(params[p]),
            // The caller's: a direct launch pushes the record's device pointer, a graph
            // node its own record's.
            EntryParam::Record => continue,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check_launch;
    use crate::check::test_case::{Case, DEVICE};
    use crate::device::DeviceLimits;

    #[test]
    fn values_are_pointers_then_strides_per_argument_then_symbols_then_params() {
        let case = Case::attn();
        let metas = case.metas();
        let plan = check_launch(
            case.contract,
            true,
            DEVICE,
            &DeviceLimits::SM_90,
            &metas,
            &case.params,
        )
        .unwrap();
        let values = abi_values(case.contract, &plan, &metas, &case.params).unwrap();
        let c = case.contract;
        let tensors: usize = c.args.iter().map(|a| 1 + a.dims.len()).sum();
        assert_eq!(
            values.len(),
            tensors + c.symbols.len() + case.params.len(),
            "{values:?}"
        );
        // The first argument's pointer, then as many index values as it has dimensions.
        assert!(matches!(values[0], AbiValue::Ptr(p) if p == metas[0].base_ptr));
        assert!(
            values[1..=c.args[0].dims.len()]
                .iter()
                .all(|v| matches!(v, AbiValue::I32(_)))
        );
        assert!(matches!(values.last(), Some(AbiValue::Param(_))));
    }

    #[test]
    fn a_parameter_pointer_points_at_the_payload_of_its_type() {
        let values = [
            AbiValue::Ptr(0x1234_5678_9abc),
            AbiValue::I32(-7),
            AbiValue::Param(Scalar::F32(0.5)),
        ];
        // SAFETY: each pointer is read as the type it was made from, while `values` lives.
        unsafe {
            assert_eq!(*values[0].param_ptr().cast::<u64>(), 0x1234_5678_9abc);
            assert_eq!(*values[1].param_ptr().cast::<i32>(), -7);
            assert_eq!(*values[2].param_ptr().cast::<f32>(), 0.5);
        }
    }
}
