//! What can be wrong with a quantized checkpoint.

use std::path::PathBuf;

use crate::error::Error;
use crate::quant::QuantError;

/// A checkpoint imac cannot load as it is. Every variant names the file, the config key or
/// the tensor at fault, and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A file could not be opened, read or mapped.
    #[error("cannot read {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },

    /// A weight file is no valid safetensors file.
    #[error("{} is not a valid safetensors file: {message}", .path.display())]
    Safetensors { path: PathBuf, message: String },

    /// The directory has no quantization config.
    #[error(
        "no quantization config in {}: looked for quantize_config.json, quant_config.json \
         and a quantization_config in config.json",
        .dir.display()
    )]
    NoConfig { dir: PathBuf },

    /// The directory has no `.safetensors` file.
    #[error("no .safetensors file in {}", .dir.display())]
    NoWeights { dir: PathBuf },

    /// The config is no JSON object, or a key has a value of the wrong kind or range.
    #[error("{}: config key `{key}` is {value}, expected {expected}", .path.display())]
    ConfigKey {
        path: PathBuf,
        key: &'static str,
        value: String,
        expected: &'static str,
    },

    /// The config asks for a format imac does not read; refused rather than misread.
    #[error("{}: {what} (config key `{key}` = {value}) is not supported", .path.display())]
    Unsupported {
        path: PathBuf,
        key: &'static str,
        value: String,
        what: String,
    },

    /// quantize_config.json (or quant_config.json) and config.json's quantization_config
    /// read as different layouts or group sizes.
    #[error(
        "{} reads as {first_reads}, but {} as {second_reads}: the checkpoint would load one \
         way here and another where the second is read first (transformers, vLLM)",
        .first.display(), .second.display()
    )]
    ConfigsDisagree {
        first: PathBuf,
        second: PathBuf,
        first_reads: String,
        second_reads: String,
    },

    /// `model.safetensors.index.json` names a shard for a tensor that is not in it.
    #[error(
        "{}: tensor {tensor} is in {shard}, it says, but {}",
        .index.display(),
        match .found { Some(f) => format!("it is in {}", f.display()), None => "no shard has it".into() }
    )]
    NotWhereIndexed {
        index: PathBuf,
        tensor: String,
        shard: String,
        found: Option<PathBuf>,
    },

    /// A shard holds a tensor `model.safetensors.index.json` does not name.
    #[error("tensor {tensor} of {} is not in {}", .found.display(), .index.display())]
    NotIndexed {
        index: PathBuf,
        tensor: String,
        found: PathBuf,
    },

    /// Two weight files hold a tensor of the same name.
    #[error("tensor {tensor} is in both {} and {}", .first.display(), .second.display())]
    DuplicateTensor {
        tensor: String,
        first: PathBuf,
        second: PathBuf,
    },

    /// A tensor the layer's format needs is absent.
    #[error("tensor {tensor} is missing: {why}")]
    MissingTensor { tensor: String, why: &'static str },

    /// A tensor is present where the format has none.
    #[error("tensor {tensor} is not expected: {why}")]
    UnexpectedTensor { tensor: String, why: &'static str },

    /// A tensor has another element type than the format stores.
    #[error("tensor {tensor} is {actual}, expected {expected}")]
    Dtype {
        tensor: String,
        expected: &'static str,
        actual: String,
    },

    /// A tensor has another shape than the format's padded one (a transposed one
    /// included).
    #[error("tensor {tensor} has shape {actual:?}, expected {formula} = {expected:?}")]
    Shape {
        tensor: String,
        formula: &'static str,
        expected: Vec<usize>,
        actual: Vec<usize>,
    },

    /// A tensor has another rank than its shape's formula.
    #[error("tensor {tensor} has shape {actual:?}, expected a shape {formula}")]
    Rank {
        tensor: String,
        formula: &'static str,
        actual: Vec<usize>,
    },

    /// A quantized layer's qweight or scales has no elements.
    #[error(
        "tensor {tensor} has shape {actual:?}, with no elements: a quantized layer has at \
         least one row and one column"
    )]
    NoElements { tensor: String, actual: Vec<usize> },

    /// GPTQ's g_idx, one entry a row of K, does not fit qweight's rows of 8 packed rows.
    #[error(
        "tensor {tensor} has {len} entries, one a row of K, but qweight's {rows} packed rows \
         hold K in {lo}..={hi}"
    )]
    GIdxLen {
        tensor: String,
        len: usize,
        rows: usize,
        lo: usize,
        hi: usize,
    },

    /// `sym` is true, but a stored zero point is not 8.
    #[error(
        "tensor {tensor}: the config says sym = true, but the zero point of group {group}, \
         column {col} reads {zero}, not 8"
    )]
    SymmetricZero {
        tensor: String,
        group: usize,
        col: usize,
        zero: u8,
    },

    /// The buffers, though of the right shapes, describe no valid weight (a g_idx entry
    /// out of range, a group size that does not fit K).
    #[error("tensor {tensor}: {source}")]
    Quant { tensor: String, source: QuantError },

    /// A layer's buffers, each checked, refused together when made into a weight.
    #[error("layer {layer}: {source}")]
    Layer { layer: String, source: QuantError },

    /// Uploading to the device failed.
    #[error(transparent)]
    Device(#[from] Error),
}
