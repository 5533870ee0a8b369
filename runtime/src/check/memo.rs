//! The last launch of a kernel that passed its checks, and its plan.
//!
//! [`check_launch`](super::check_launch) is a function of the contract, the device and its
//! limits (fixed for a [`crate::Kernel`]), the argument metadata and the params. A launch
//! whose metadata and params equal the last passing launch's, field for field, passes
//! again with the same plan, so the kernel takes that plan instead of checking again.
//! Repeated launches of one shape on the same buffers are the common case (the steps of a
//! decode loop), and the comparison costs a fraction of the checks. Float params are
//! compared by their bits.

use smallvec::SmallVec;

use super::{Checked, TensorMeta};
use crate::capacity::{ARGS, DIMS};
use crate::contract::{DType, Scalar};
use crate::device::DeviceId;

/// Params kept inline; a launch with more is still remembered, on the heap.
const PARAMS: usize = 8;

#[derive(Debug, Default)]
pub(crate) struct Memo {
    last: Option<Remembered>,
}

#[derive(Debug)]
struct Remembered {
    device: DeviceId,
    metas: SmallVec<[OwnedMeta; ARGS]>,
    params: SmallVec<[Scalar; PARAMS]>,
    checked: Checked,
}

/// A [`TensorMeta`] that owns its shape and strides.
#[derive(Debug)]
struct OwnedMeta {
    dtype: DType,
    shape: SmallVec<[usize; DIMS]>,
    strides: SmallVec<[isize; DIMS]>,
    offset: usize,
    buffer_len: usize,
    base_ptr: u64,
    device: DeviceId,
}

impl OwnedMeta {
    fn of(m: &TensorMeta<'_>) -> OwnedMeta {
        OwnedMeta {
            dtype: m.dtype,
            shape: m.shape.iter().copied().collect(),
            strides: m.strides.iter().copied().collect(),
            offset: m.offset,
            buffer_len: m.buffer_len,
            base_ptr: m.base_ptr,
            device: m.device,
        }
    }

    /// Borrowed back, for `TensorMeta`'s own equality: every field the checks read.
    fn meta(&self) -> TensorMeta<'_> {
        TensorMeta {
            dtype: self.dtype,
            shape: &self.shape,
            strides: &self.strides,
            offset: self.offset,
            buffer_len: self.buffer_len,
            base_ptr: self.base_ptr,
            device: self.device,
        }
    }
}

/// Equal values of one type; floats by their bits, so that -0.0 and 0.0, or two NaNs,
/// are told apart or matched exactly as the kernel would receive them.
fn same(a: &Scalar, b: &Scalar) -> bool {
    match (a, b) {
        (Scalar::F32(x), Scalar::F32(y)) => x.to_bits() == y.to_bits(),
        (Scalar::F64(x), Scalar::F64(y)) => x.to_bits() == y.to_bits(),
        (x, y) => x == y,
    }
}

impl Memo {
    /// The plan of the last passing launch, if this one has the same arguments.
    pub(crate) fn recall(
        &self,
        device: DeviceId,
        metas: &[TensorMeta<'_>],
        params: &[Scalar],
    ) -> Option<&Checked> {
        let last = self.last.as_ref()?;
        let hit = last.device == device
            && last.metas.len() == metas.len()
            && last.metas.iter().zip(metas).all(|(o, m)| o.meta() == *m)
            && last.params.len() == params.len()
            && last.params.iter().zip(params).all(|(a, b)| same(a, b));
        hit.then_some(&last.checked)
    }

    /// Remembers a launch that passed its checks with `checked`.
    pub(crate) fn remember(
        &mut self,
        device: DeviceId,
        metas: &[TensorMeta<'_>],
        params: &[Scalar],
        checked: &Checked,
    ) {
        self.last = Some(Remembered {
            device,
            metas: metas.iter().map(OwnedMeta::of).collect(),
            params: params.iter().copied().collect(),
            checked: checked.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check_launch;
    use crate::check::test_attn as attn;
    use crate::check::test_case::{Case, DEVICE};
    use crate::device::DeviceLimits;

    fn checked(metas: &[TensorMeta<'_>], params: &[Scalar]) -> Checked {
        check_launch(
            &attn::ATTN,
            true,
            DEVICE,
            &DeviceLimits::SM_90,
            metas,
            params,
        )
        .expect("the launch passes its checks")
    }

    #[test]
    fn the_same_arguments_recall_the_plan() {
        let case = Case::attn();
        let (metas, params) = (case.metas(), case.params.clone());
        let mut memo = Memo::default();
        assert!(memo.recall(DEVICE, &metas, &params).is_none());
        let plan = checked(&metas, &params);
        memo.remember(DEVICE, &metas, &params, &plan);
        let recalled = memo.recall(DEVICE, &metas, &params).expect("a hit");
        assert_eq!(
            (&recalled.values, recalled.grid, recalled.index),
            (&plan.values, plan.grid, plan.index)
        );
    }

    #[test]
    fn any_difference_is_a_miss() {
        let case = Case::attn();
        let (metas, params) = (case.metas(), case.params.clone());
        let mut memo = Memo::default();
        memo.remember(DEVICE, &metas, &params, &checked(&metas, &params));
        let other_device = DeviceId {
            ordinal: 1,
            context: 2,
        };
        assert!(memo.recall(other_device, &metas, &params).is_none());
        assert!(memo.recall(DEVICE, &metas[..2], &params).is_none());
        assert!(memo.recall(DEVICE, &metas, &[]).is_none());
        for p in [Scalar::F32(0.25), Scalar::F32(-0.0), Scalar::F64(0.125)] {
            assert!(memo.recall(DEVICE, &metas, &[p]).is_none(), "{p:?}");
        }
        static SHAPE: [usize; 4] = [2, 8, 128, 65];
        static STRIDES: [isize; 4] = [8 * 128 * 65, 128 * 65, 65, 1];
        let changes: [&dyn Fn(&mut TensorMeta<'_>); 8] = [
            &|m| {
                m.dtype = if m.dtype == DType::F32 {
                    DType::F16
                } else {
                    DType::F32
                }
            },
            &|m| m.shape = &SHAPE,
            &|m| m.strides = &STRIDES,
            &|m| m.offset = 1,
            &|m| m.buffer_len += 1,
            &|m| m.base_ptr += 2,
            &|m| m.device = other_device,
            &|m| m.shape = &SHAPE[..3],
        ];
        for (i, change) in changes.iter().enumerate() {
            for arg in 0..3 {
                let mut changed = metas.clone();
                change(&mut changed[arg]);
                assert!(
                    memo.recall(DEVICE, &changed, &params).is_none(),
                    "change {i} of argument {arg}"
                );
            }
        }
        assert!(memo.recall(DEVICE, &metas, &params).is_some());
    }

    #[test]
    fn a_nan_param_matches_only_its_own_bits() {
        let case = Case::attn();
        let metas = case.metas();
        let nan = [Scalar::F32(f32::NAN)];
        let mut memo = Memo::default();
        memo.remember(DEVICE, &metas, &nan, &checked(&metas, &nan));
        assert!(memo.recall(DEVICE, &metas, &nan).is_some());
        let other_nan = [Scalar::F32(f32::from_bits(f32::NAN.to_bits() ^ 1))];
        assert!(memo.recall(DEVICE, &metas, &other_nan).is_none());
    }
}
