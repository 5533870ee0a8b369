//! Which quantized layout a weight uses.

use std::fmt;

use crate::contract::DType;

/// How GPTQ stores its per-group zero points.
///
/// Zero points are 4-bit values `0..=15`. The *real* zero `z` of group `g`, column `n` is
/// what dequantization subtracts; the *stored* word is what sits in `qzeros`. Columns
/// `8w..8w+7` share word `w`: with the real zeros packed plainly into a word `r` (column
/// `n` at nibble `n % 8`), each style says which word is stored for `r`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZeroStyle {
    /// GPTQ "v1", the on-disk format of GPTQModel by default (`checkpoint_format: "gptq"`)
    /// and of AutoGPTQ: the stored word is `r - 0x11111111` on the whole 32-bit word
    /// (wrapping), and is read back as `stored + 0x11111111`, carries included. This is
    /// GPTQModel's own conversion in both directions, so every real zero, 0 included,
    /// round-trips exactly: a real zero of 0 is stored as 15 (14 where the nibble below
    /// borrowed too) and borrows 1 from the nibble above, which the carry of the addition
    /// gives back.
    ///
    /// For words with no real zero of 0 this is the classic per-nibble `stored + 1`
    /// (vLLM's `gptq_gemm`, AutoGPTQ's kernels); they differ only where a zero is 0, which
    /// those readers cannot express (they read 16). docs/quantized.md compares them.
    MinusOne,
    /// `stored = r`: GPTQ "v2" (`checkpoint_format: "gptq_v2"`, GPTQModel's in-memory
    /// format and an opt-in on-disk one).
    Plain,
    /// No qzeros buffer: the zero point of every group is 8.
    Symmetric,
}

/// What GPTQ "v1" subtracts from a whole word of real zeros to store it, and adds back
/// to read it: 1 in every nibble.
pub const GPTQ_V1_ZERO_OFFSET: u32 = 0x1111_1111;

impl ZeroStyle {
    /// The qzeros word stored for a word `real` of 8 plainly packed real zeros.
    pub const fn store_word(self, real: u32) -> u32 {
        match self {
            ZeroStyle::MinusOne => real.wrapping_sub(GPTQ_V1_ZERO_OFFSET),
            ZeroStyle::Plain | ZeroStyle::Symmetric => real,
        }
    }

    /// The 8 plainly packed real zeros of stored word `stored` (the exact inverse of
    /// [`ZeroStyle::store_word`]).
    pub const fn load_word(self, stored: u32) -> u32 {
        match self {
            ZeroStyle::MinusOne => stored.wrapping_add(GPTQ_V1_ZERO_OFFSET),
            ZeroStyle::Plain | ZeroStyle::Symmetric => stored,
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

    /// Every format, in the order of [`QuantFormat::name`]'s list.
    pub const ALL: [QuantFormat; 5] = [
        QuantFormat::Gptq(ZeroStyle::MinusOne),
        QuantFormat::Gptq(ZeroStyle::Plain),
        QuantFormat::Gptq(ZeroStyle::Symmetric),
        QuantFormat::Awq,
        QuantFormat::Int8,
    ];

    /// The format named `name` ([`QuantFormat::name`]), as a spec writes it.
    pub fn from_name(name: &str) -> Option<Self> {
        QuantFormat::ALL.into_iter().find(|f| f.name() == name)
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
