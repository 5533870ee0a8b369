//! Which quantized layout a weight uses.

use std::fmt;

use crate::contract::DType;

/// How GPTQ stores its per-group zero points.
///
/// Zero points are 4-bit values `0..=15`. The *real* zero `z` of group `g`, column `n` is
/// what dequantization subtracts; the *stored* nibble is what sits in `qzeros`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZeroStyle {
    /// Classic GPTQ (AutoGPTQ "v1" checkpoints): `stored = (z - 1) & 0xF`, so
    /// `z = (stored + 1) & 0xF`. The subtraction wraps in 4 bits: a real zero of 0 is
    /// stored as 15, and a stored 15 reads back as 0.
    ///
    /// Note: AutoGPTQ's own kernels compute `stored + 1` without the mask, reading a stored
    /// 15 as 16. imac masks, so every real zero in `0..=15` round-trips exactly; the GPU
    /// accessor must compute `(stored + 1) & 15`.
    MinusOne,
    /// `stored = z` (AutoGPTQ "v2", GPTQModel).
    Plain,
    /// No qzeros buffer: the zero point of every group is 8.
    Symmetric,
}

impl ZeroStyle {
    /// The nibble stored for real zero `z` (`z` in `0..=15`; higher bits are dropped).
    pub const fn store(self, z: u8) -> u8 {
        match self {
            ZeroStyle::MinusOne => z.wrapping_sub(1) & 0xF,
            ZeroStyle::Plain | ZeroStyle::Symmetric => z & 0xF,
        }
    }

    /// The real zero for stored nibble `s` (the exact inverse of [`ZeroStyle::store`]).
    pub const fn load(self, s: u8) -> u8 {
        match self {
            ZeroStyle::MinusOne => s.wrapping_add(1) & 0xF,
            ZeroStyle::Plain | ZeroStyle::Symmetric => s & 0xF,
        }
    }
}

/// The zero point of symmetric 4-bit GPTQ.
pub const SYMMETRIC_ZERO: u8 = 8;

/// A quantized weight format. See [`crate::quant`] for the exact layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuantFormat {
    /// 4-bit, qweight `i32 [ceil(K/8), N]` packed along K; zeros as the style says.
    Gptq(ZeroStyle),
    /// 4-bit, qweight `i32 [K, ceil(N/8)]` packed along N with the AWQ interleave; zeros
    /// plain, same packing.
    Awq,
    /// Signed 8-bit, qweight `i8 [K, N]`, symmetric (zero 0).
    Int8,
}

impl QuantFormat {
    /// Whether the format has a `qzeros` buffer.
    pub const fn has_zeros(self) -> bool {
        matches!(
            self,
            QuantFormat::Gptq(ZeroStyle::MinusOne | ZeroStyle::Plain) | QuantFormat::Awq
        )
    }

    /// Whether the format accepts an act-order `g_idx` (GPTQ only).
    pub const fn takes_g_idx(self) -> bool {
        matches!(self, QuantFormat::Gptq(_))
    }

    /// Element type of `qweight`: `i32` words, or `i8` for int8.
    pub const fn qweight_dtype(self) -> DType {
        match self {
            QuantFormat::Int8 => DType::I8,
            QuantFormat::Gptq(_) | QuantFormat::Awq => DType::I32,
        }
    }

    /// Bits per quantized value.
    pub const fn bits(self) -> u32 {
        match self {
            QuantFormat::Int8 => 8,
            QuantFormat::Gptq(_) | QuantFormat::Awq => 4,
        }
    }

    /// `gptq`, `gptq(zeros = plain)`, `gptq(sym)`, `awq`, `int8`.
    pub const fn name(self) -> &'static str {
        match self {
            QuantFormat::Gptq(ZeroStyle::MinusOne) => "gptq",
            QuantFormat::Gptq(ZeroStyle::Plain) => "gptq(zeros = plain)",
            QuantFormat::Gptq(ZeroStyle::Symmetric) => "gptq(sym)",
            QuantFormat::Awq => "awq",
            QuantFormat::Int8 => "int8",
        }
    }
}

impl fmt::Display for QuantFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
