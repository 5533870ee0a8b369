//! What can be wrong with quantized weights on the host.

use crate::contract::DType;

use super::format::QuantFormat;

/// A quantized-weight input that describes no valid buffer set. Every variant names the
/// offending value and what was expected; nothing in [`crate::quant`] panics on bad input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QuantError {
    /// The dense weight does not hold `k * n` values.
    #[error("weight has {actual} values, but K = {k}, N = {n} needs K*N = {expected}")]
    WeightLen {
        k: usize,
        n: usize,
        expected: usize,
        actual: usize,
    },

    /// The group size is not in `1..=K`.
    #[error("group size {group} is invalid for K = {k}: it must be in 1..=K")]
    Group { group: usize, k: usize },

    /// A buffer's element count overflows `usize`.
    #[error("{what} = {rows} * {cols} overflows usize")]
    Overflow {
        what: &'static str,
        rows: usize,
        cols: usize,
    },

    /// A buffer has the wrong number of elements for its padded shape.
    #[error("{buffer} has {actual} elements, but its shape {formula} = {shape:?} needs {expected}")]
    BufferLen {
        buffer: &'static str,
        formula: &'static str,
        shape: Vec<usize>,
        expected: usize,
        actual: usize,
    },

    /// A buffer's shape is not its padded shape (a transposed buffer of the right size
    /// included).
    #[error("{buffer} has shape {actual:?}, but its shape {formula} is {expected:?}")]
    BufferShape {
        buffer: &'static str,
        formula: &'static str,
        expected: Vec<usize>,
        actual: Vec<usize>,
    },

    /// A buffer has another number of dimensions than its formula.
    #[error("{buffer} has shape {actual:?}, but its shape {formula} has 2 dimensions")]
    Rank {
        buffer: &'static str,
        formula: &'static str,
        actual: Vec<usize>,
    },

    /// The packed weight has the wrong element type for the format (i32 words for GPTQ
    /// and AWQ, i8 for int8).
    #[error("format {format} stores qweight as {expected}, but {actual} was given")]
    WeightType {
        format: QuantFormat,
        expected: DType,
        actual: DType,
    },

    /// A qzeros buffer was given to a format that has none, or is missing where the
    /// format needs one.
    #[error("format {format} {}", if *.expected { "needs a qzeros buffer, but none was given" } else { "has no qzeros buffer, but one was given" })]
    Zeros { format: QuantFormat, expected: bool },

    /// `g_idx` was given to a format without act-order (only GPTQ has it).
    #[error("format {format} takes no g_idx (act-order is GPTQ only)")]
    GIdxUnsupported { format: QuantFormat },

    /// `g_idx` does not have one entry per row.
    #[error("g_idx has {actual} entries, but K = {k} rows need {k}")]
    GIdxLen { k: usize, actual: usize },

    /// A row's group index is outside `0..groups`.
    #[error(
        "g_idx[{row}] = {value} is outside the valid range 0..{groups} (0..=ceil(K/G)-1 with \
         K = {k}, G = {group})"
    )]
    GIdxValue {
        row: usize,
        value: i32,
        groups: usize,
        k: usize,
        group: usize,
    },

    /// A value to pack does not fit its field (4-bit values are `0..=15`).
    #[error("{what}[{index}] = {value} does not fit in 4 bits (0..=15)")]
    Nibble {
        what: &'static str,
        index: usize,
        value: u8,
    },

    /// Zeros of a symmetric format are implicit (8) and have no packed buffer.
    #[error("symmetric GPTQ has no packed zeros (its zero point is always 8)")]
    SymmetricZeros,

    /// The dense weight holds a NaN or an infinity.
    #[error("weight[{row}, {col}] = {value} is not finite")]
    NonFinite { row: usize, col: usize, value: f32 },

    /// A group's scale is too large for the scale type.
    #[error("scale of group {group}, column {col} is {scale}, past the largest finite {dtype}")]
    ScaleOverflow {
        group: usize,
        col: usize,
        scale: f32,
        dtype: DType,
    },

    /// A kernel declares another format than the weight has.
    #[error("the kernel reads {expected}{}, but the weight is {actual}{}", if *expected_g_idx { " with g_idx" } else { "" }, if *actual_g_idx { " with g_idx" } else { "" })]
    FormatMismatch {
        expected: QuantFormat,
        expected_g_idx: bool,
        actual: QuantFormat,
        actual_g_idx: bool,
    },
}
