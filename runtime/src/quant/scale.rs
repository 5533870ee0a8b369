//! Scale element types: `f16` and `bf16`.

use half::{bf16, f16};

use crate::element::Element;

mod sealed {
    pub trait Sealed {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
}

/// A type per-group scales are stored in: [`half::f16`] or [`half::bf16`].
pub trait QuantScale: Element + PartialEq + std::fmt::Debug + sealed::Sealed {
    const ONE: Self;
    /// Round to nearest even, as `__float2half_rn` / `__float2bfloat16_rn`.
    fn from_f32(x: f32) -> Self;
    /// Exact.
    fn to_f32(self) -> f32;
    /// The smallest value `>= x`, for finite `x > 0`; infinity when `x` is past the
    /// largest finite value.
    fn round_up(x: f32) -> Self;
}

macro_rules! scale {
    ($t:ty) => {
        impl QuantScale for $t {
            const ONE: Self = <$t>::ONE;
            fn from_f32(x: f32) -> Self {
                <$t>::from_f32(x)
            }
            fn to_f32(self) -> f32 {
                <$t>::to_f32(self)
            }
            fn round_up(x: f32) -> Self {
                let s = <$t>::from_f32(x);
                if s.is_finite() && s.to_f32() < x {
                    // Positive and finite: the next value up is the next bit pattern
                    // (possibly infinity, past the largest finite value).
                    <$t>::from_bits(s.to_bits() + 1)
                } else {
                    s
                }
            }
        }
    };
}

scale!(f16);
scale!(bf16);
