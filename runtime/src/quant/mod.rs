//! Quantized weights on the host and the device: layouts, packing, quantization, and the
//! one definition of dequantization that the generated GPU accessors match bit for bit.
//!
//! # Layouts
//!
//! The logical weight `W` is `K x N` (row `k`, column `n`; row-major f32 on input). The
//! group size `G` satisfies `1 <= G <= K` (`G == K`: one group); there are
//! `NG = ceil(K/G)` groups, the last one possibly partial. Every buffer is **padded**: a
//! `K` that is no multiple of 8 or of `G`, or an `N` that is no multiple of 8, still
//! yields whole words and groups. Pad nibbles are written as 0 (in GPTQ v1's qzeros, before
//! the word is stored minus `0x11111111`) and are never read as data.
//!
//! A packed word is an `i32` of 8 nibbles; nibble `i` is bits `4*i .. 4*i+4`
//! (`(word >> 4*i) & 0xF` on the unsigned bit pattern); nibble 0 is the least significant.
//!
//! | format | buffer  | dtype     | shape                    | element `(k, n)` / `(g, n)`                        |
//! |--------|---------|-----------|--------------------------|----------------------------------------------------|
//! | GPTQ   | qweight | i32       | `[ceil(K/8), N]`         | nibble `k % 8` of word `(k / 8, n)` (along K)      |
//! | GPTQ   | qzeros  | i32       | `[ceil(K/G), ceil(N/8)]` | nibble `n % 8` of word `(g, n / 8)` (along N)      |
//! | AWQ    | qweight | i32       | `[K, ceil(N/8)]`         | nibble `AWQ_REVERSE[n % 8]` of word `(k, n / 8)`   |
//! | AWQ    | qzeros  | i32       | `[ceil(K/G), ceil(N/8)]` | nibble `AWQ_REVERSE[n % 8]` of word `(g, n / 8)`   |
//! | int8   | qweight | i8        | `[K, N]`                 | element `(k, n)`, signed                           |
//! | all    | scales  | f16, bf16 | `[ceil(K/G), N]`         | element `(g, n)`                                   |
//! | GPTQ   | g_idx   | i32       | `[K]`                    | group of row `k` (optional act-order)              |
//!
//! AWQ's interleave: nibble `i` of word `(k, w)` holds column `8*w + AWQ_ORDER[i]` with
//! [`AWQ_ORDER`] `= [0, 2, 4, 6, 1, 3, 5, 7]`; equivalently column `n` is at nibble
//! [`AWQ_REVERSE`]`[n % 8]` with `AWQ_REVERSE = [0, 4, 1, 5, 2, 6, 3, 7]`.
//!
//! 4-bit values `q` are unsigned, `0..=15`. Zero points `z` are `0..=15`:
//! - GPTQ [`ZeroStyle::MinusOne`] ("v1", GPTQModel's and AutoGPTQ's default on disk):
//!   the word of real zeros minus `0x11111111` on the whole word, wrapping; read as
//!   `stored + 0x11111111`, carries included, then the nibble. Exact for every real zero,
//!   0 included (stored 15, or 14 where the nibble below borrowed too, borrowing from the
//!   nibble above). docs/quantized.md compares
//!   it with vLLM's per-nibble `stored + 1`.
//! - GPTQ [`ZeroStyle::Plain`] and AWQ: `s = z`.
//! - GPTQ [`ZeroStyle::Symmetric`]: no qzeros buffer; `z = 8`.
//! - int8: no qzeros buffer; `z = 0`.
//!
//! The group of row `k` is `g_idx[k]` when a g_idx is given (each in `0..NG`, see
//! [`validate_g_idx`]), else `k / G`.
//!
//! # Dequantization
//!
//! ```text
//! value(k, n) = f16::from_f32( (q(k, n) - z(g, n)) as f32 * f32::from(scale(g, n)) )
//! ```
//!
//! with `g` the group of row `k`: an exact integer difference, one f32 multiplication
//! (round to nearest even), one rounding to f16 (round to nearest even, `__float2half_rn`).
//! [`dequant_value`] is this definition; [`dequant_reference`] applies it to a whole
//! weight.

mod args;
mod assemble;
mod checkpoint;
mod dequant;
mod device;
mod error;
mod format;
mod g_idx;
mod host;
mod infer;
mod pack;
mod quantize;
mod scale;
mod shaped;
mod spec;

pub use checkpoint::{
    Checkpoint, CheckpointError, CheckpointLayer, LeElement, QuantConfig, Scheme,
};
pub use dequant::{dequant_reference, dequant_value};
pub use device::{QWeight, QuantTensor};
pub use error::QuantError;
pub use format::{GPTQ_V1_ZERO_OFFSET, QuantFormat, SYMMETRIC_ZERO, ZeroStyle};
pub use g_idx::validate_g_idx;
pub use host::{HostQWeight, QuantHost};
pub use pack::{
    AWQ_ORDER, AWQ_REVERSE, nibble, pack_awq, pack_awq_zeros, pack_gptq, pack_gptq_zeros,
    pack_int8, unpack_awq, unpack_awq_zeros, unpack_gptq, unpack_gptq_zeros, unpack_int8,
};
pub use quantize::{quantize_awq, quantize_gptq, quantize_int8};
pub use scale::QuantScale;
pub use shaped::Shaped;
pub use spec::{BufferShape, PACK, QuantSpec};
