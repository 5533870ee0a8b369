//! A quantized weight as a launch's arguments: its logical `[K, N, G]`, then its buffers
//! in the order of the kernel's contract (qweight, qzeros, scales, g_idx).

use crate::arg::{KernelArg, LogicalShape};
use crate::error::Error;
use crate::kernel_args::KernelArgs;

use super::device::{QWeight, QuantTensor};
use super::error::QuantError;
use super::format::QuantFormat;
use super::scale::QuantScale;

impl<S: QuantScale> QuantTensor<S> {
    /// The arguments a generated stub passes for this weight, where the kernel declares
    /// `format` (with act-order `g_idx` or not). A weight of another format is refused
    /// here; the buffers' shapes, dtypes and devices are checked at launch.
    pub fn kernel_args(&self, format: QuantFormat, g_idx: bool) -> Result<KernelArgs<'_>, Error> {
        if self.format() != format || self.g_idx().is_some() != g_idx {
            return Err(QuantError::FormatMismatch {
                expected: format,
                expected_g_idx: g_idx,
                actual: self.format(),
                actual_g_idx: self.g_idx().is_some(),
            }
            .into());
        }
        let scales = self.scales();
        let mut args = KernelArgs::new();
        args.push(KernelArg::Logical(LogicalShape::new(
            self.k(),
            self.n(),
            self.group(),
            S::DTYPE,
            scales.meta().device,
        )));
        args.push(match self.qweight() {
            QWeight::Packed(t) => KernelArg::read(t),
            QWeight::Int8(t) => KernelArg::read(t),
        });
        if let Some(z) = self.qzeros() {
            args.push(KernelArg::read(z));
        }
        args.push(KernelArg::read(scales));
        if let Some(g) = self.g_idx() {
            args.push(KernelArg::read(g));
        }
        Ok(args)
    }
}
