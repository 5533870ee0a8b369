//! The accessor of a quantized argument: what differs between formats, as C expressions
//! the template places into one shared accessor shape.
//!
//! Every buffer of a quantized argument is contiguous (the runtime checks it), so its
//! innermost stride is 1 and the expressions add the column index instead of multiplying
//! it by a stride.

use super::{c_type, list};
use ima_dsl::ir::{self, DType};

pub(super) struct QuantCu {
    pub docs: Vec<String>,
    pub name: String,
    /// Its accessor type.
    pub type_name: String,
    /// Contract index of the logical argument, for checked-mode reports.
    pub arg: usize,
    pub summary: String,
    pub buffers: String,
    pub parts: Vec<QuantPartCu>,
    pub bits: u32,
    /// Packed along K (GPTQ): a word holds 8 rows of one column.
    pub along_k: bool,
    pub g_idx: bool,
    pub g_idx_arg: usize,
    pub has_zeros: bool,
    pub to_float: &'static str,
    pub scale_type: &'static str,
    /// `align(16)`: qweight and scales rows may be read 16 bytes at a time.
    pub vec: bool,
    /// The stored value of `(k, n)`.
    pub raw: String,
    /// Column `n`'s zero point within its qzeros word `zw`.
    pub zero_in_word: String,
    pub word_doc: &'static str,
    /// `tma(ROWS, COLS)`: tiles of ROWS rows of K by COLS columns come by TMA (GPTQ only),
    /// the words in boxes of the third's columns (`buffer_tma`'s).
    pub tma: Option<(u32, u32, u32)>,
    /// The qualifier of its buffers' pointers (cuda.rs's `restrict`).
    pub restrict: &'static str,
    /// The type of its recorder (cuda.rs's `recorder`).
    pub recorder: &'static str,
}

pub(super) struct QuantPartCu {
    pub part: &'static str,
    pub c_type: &'static str,
    pub rank: usize,
}

pub(super) fn quant(
    a: &ir::TensorArg,
    q: &ir::Quant,
    index: usize,
    restrict: &'static str,
    recorder: &'static str,
) -> QuantCu {
    let buffers = q.buffers(&a.dims[0], &a.dims[1], a.dtype);
    let g_idx_arg = index + 1 + buffers.iter().position(|b| b.part == "g_idx").unwrap_or(0);
    let to_float = if a.dtype == DType::BF16 {
        "__bfloat162float"
    } else {
        "__half2float"
    };
    let (bits, along_k, raw, zero_in_word, summary, word_doc) = match q.format {
        ir::QuantFormat::Gptq { zeros, g_idx } => {
            let (zero, desc) = match zeros {
                // GPTQ v1: the whole word plus 1 in every nibble, carries included
                // (GPTQModel's reading, exact for zeros of 0; docs/quantized.md).
                ir::Zeros::MinusOne => (
                    "int(((zw + 0x11111111u) >> (4 * (n % 8))) & 0xF)",
                    "zeros stored minus one",
                ),
                ir::Zeros::Plain => ("int((zw >> (4 * (n % 8))) & 0xF)", "zeros stored plain"),
                ir::Zeros::Symmetric => ("8", "symmetric"),
            };
            (
                4,
                true,
                "int((qweight[(k / 8) * qweight_s0 + n] >> (4 * (k % 8))) & 0xF)",
                zero,
                format!(
                    "q4 GPTQ, packed along K, {desc}{}",
                    if g_idx { ", act-order g_idx" } else { "" }
                ),
                "rows 8*(k/8) to 8*(k/8)+7 of column n",
            )
        }
        ir::QuantFormat::Awq => (
            4,
            false,
            "int((qweight[k * qweight_s0 + n / 8] >> ima_shift(n % 8)) & 0xF)",
            "int((zw >> ima_shift(n % 8)) & 0xF)",
            "q4 AWQ, packed along N in the order [0, 2, 4, 6, 1, 3, 5, 7]".to_string(),
            "columns 8*(n/8) to 8*(n/8)+7 of row k",
        ),
        ir::QuantFormat::Int8 => (
            8,
            false,
            "int(qweight[k * qweight_s0 + n])",
            "0",
            "q8, symmetric".to_string(),
            "",
        ),
    };
    QuantCu {
        restrict,
        recorder,
        docs: super::comment_lines(&a.docs),
        name: a.name.clone(),
        type_name: super::accessor_type(&a.name),
        arg: index,
        summary: format!(
            "q{bits}[{}] {} with group {}",
            list(a.dims.iter().map(|d| &d.text)),
            summary,
            q.group.text
        ),
        buffers: list(buffers.iter().map(|b| {
            format!(
                "{} {}[{}]",
                b.part,
                b.dtype.name(),
                list(b.dims.iter().map(|d| &d.text))
            )
        })),
        has_zeros: buffers.iter().any(|b| b.part == "qzeros"),
        parts: buffers
            .iter()
            .map(|b| QuantPartCu {
                part: b.part,
                c_type: c_type(b.dtype),
                rank: b.dims.len(),
            })
            .collect(),
        bits,
        along_k,
        g_idx: matches!(q.format, ir::QuantFormat::Gptq { g_idx: true, .. }),
        g_idx_arg,
        to_float,
        scale_type: c_type(a.dtype),
        vec: a.align >= 16,
        raw: raw.to_string(),
        zero_in_word: zero_in_word.to_string(),
        word_doc,
        tma: a
            .tma
            .map(|t| (t.rows, t.cols, ima_dsl::abi::buffer_tma(t, "qweight").cols)),
    }
}
