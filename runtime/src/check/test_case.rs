//! Launch arguments for the checks' unit tests (cost, memo, abi): contiguous tensors of given
//! shapes, far apart in memory, on one device.

#[path = "../../tests/common/touch.rs"]
mod touch;

use super::TensorMeta;
use super::test_attn as attn;
use crate::contract::{DType, KernelContract, Scalar};
use crate::device::DeviceId;

pub(crate) const DEVICE: DeviceId = DeviceId {
    ordinal: 0,
    context: 1,
};

/// One launch's arguments: contiguous tensors of `shapes`, far apart in memory.
pub(crate) struct Case {
    pub contract: &'static KernelContract,
    dtypes: Vec<DType>,
    shapes: Vec<Vec<usize>>,
    strides: Vec<Vec<isize>>,
    pub params: Vec<Scalar>,
}

impl Case {
    pub fn new(
        contract: &'static KernelContract,
        tensors: &[(DType, &[usize])],
        params: &[Scalar],
    ) -> Self {
        let strides = tensors
            .iter()
            .map(|(_, shape)| {
                let mut s = vec![1isize; shape.len()];
                for i in (0..shape.len().saturating_sub(1)).rev() {
                    s[i] = s[i + 1] * shape[i + 1] as isize;
                }
                s
            })
            .collect();
        Case {
            contract,
            dtypes: tensors.iter().map(|t| t.0).collect(),
            shapes: tensors.iter().map(|t| t.1.to_vec()).collect(),
            strides,
            params: params.to_vec(),
        }
    }

    pub fn touch() -> Self {
        Case::new(&touch::TOUCH, &[(DType::F32, &[256])], &[])
    }

    pub fn attn() -> Self {
        Case::new(
            &attn::ATTN,
            &[
                (DType::F16, &[2, 8, 128, 64]),
                (DType::F16, &[2, 96, 8, 64]),
                (DType::F32, &[2, 8, 128, 96]),
            ],
            &[Scalar::F32(0.125)],
        )
    }

    pub fn metas(&self) -> Vec<TensorMeta<'_>> {
        (0..self.shapes.len())
            .map(|i| TensorMeta {
                dtype: self.dtypes[i],
                shape: &self.shapes[i],
                strides: &self.strides[i],
                offset: 0,
                buffer_len: self.shapes[i].iter().product(),
                base_ptr: (i as u64 + 1) << 40,
                device: DEVICE,
            })
            .collect()
    }
}
