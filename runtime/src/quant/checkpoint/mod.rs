//! Loading quantized linear layers from GPTQModel, AutoGPTQ and AutoAWQ checkpoints:
//! safetensors files beside a quantization config.
//!
//! [`Checkpoint::open`] reads the config ([`QuantConfig`]: `bits`, `group_size`, `sym`,
//! `desc_act`, `checkpoint_format`, AWQ's `version` and `zero_point`) and memory-maps the
//! shards `model.safetensors.index.json` names (else every `.safetensors` file of the
//! directory), reading only their headers. [`Checkpoint::layer`]
//! takes a layer by its prefix (`model.layers.0.mlp.down_proj`), finds `PREFIX.qweight`,
//! `PREFIX.qzeros`, `PREFIX.scales` and `PREFIX.g_idx`, infers `K`, `N` and the group size,
//! and checks every tensor's dtype and shape against the format the config implies
//! (a [`CheckpointLayer`]). From there, [`CheckpointLayer::upload`] copies each tensor from
//! the mapped file to the device with no host copy in between (when the file's data is
//! aligned, as the safetensors writers make it), and [`CheckpointLayer::to_host`] makes a
//! [`crate::quant::QuantHost`] for the host reference.
//!
//! What the config implies:
//!
//! | config | imac format |
//! |---|---|
//! | `quant_method: "gptq"`, `checkpoint_format: "gptq"` (or none), `sym: false` | `gptq` (zeros v1, [`crate::quant::ZeroStyle::MinusOne`]) |
//! | `checkpoint_format: "gptq_v2"`, `sym: false` | `gptq(zeros = plain)` |
//! | `sym: true` (the default) | `gptq(sym)`; the file's qzeros must all read 8 |
//! | `desc_act: true` | the same, with `g_idx` |
//! | `quant_method: "awq"`, `version: "gemm"` (or none) | `awq` |
//!
//! GPTQ writers store `g_idx` even without act-order (`row / group_size`): such a g_idx
//! is checked and dropped, so the layer needs no act-order kernel; a g_idx that differs
//! is kept whatever `desc_act` says, because the writing library's kernels use it.
//! Refused by name, not misread: other bit widths (8-bit GPTQ included), AWQ GEMV and
//! other AWQ layouts, AWQ without zero points, Marlin and other repacked GPTQ formats,
//! words other than int32.

mod config;
mod error;
mod layer;
mod le;
mod shard_index;
mod upload;

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use safetensors::SafeTensors;
use safetensors::tensor::{Dtype, Metadata};

pub use config::{QuantConfig, Scheme};
pub use error::CheckpointError;
pub use layer::CheckpointLayer;
pub use le::LeElement;
use shard_index::{SHARD_INDEX, ShardIndex};

/// One memory-mapped safetensors file and its parsed header.
struct WeightFile {
    path: PathBuf,
    map: Mmap,
    /// Where the data section starts: 8 bytes of header length, then the header.
    data_start: usize,
    metadata: Metadata,
}

/// A tensor of a checkpoint as stored: its name, dtype, shape and little-endian bytes in
/// the mapped file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawTensor<'a> {
    pub name: &'a str,
    pub dtype: Dtype,
    pub shape: &'a [usize],
    pub bytes: &'a [u8],
}

/// A quantized checkpoint: its config and its memory-mapped weight files.
///
/// The files are mapped read-only and must not change while the checkpoint is open (as for
/// any memory map, a change under it would change or fault the data read).
pub struct Checkpoint {
    config: QuantConfig,
    files: Vec<WeightFile>,
    /// Tensor name to the file holding it.
    index: HashMap<String, usize>,
}

impl std::fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoint")
            .field("config", &self.config)
            .field(
                "files",
                &self.files.iter().map(|w| &w.path).collect::<Vec<_>>(),
            )
            .field("tensors", &self.index.len())
            .finish()
    }
}

impl Checkpoint {
    /// A checkpoint directory: its quantization config ([`QuantConfig::find`]) and its
    /// weight files: those `model.safetensors.index.json` names where there is one (as
    /// transformers reads a sharded checkpoint: a stray file beside them is not read, and
    /// each tensor must be in the shard the index names), else every `.safetensors` file.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, CheckpointError> {
        let dir = dir.as_ref();
        let config = QuantConfig::find(dir)?;
        let index_path = dir.join(SHARD_INDEX);
        if index_path.is_file() {
            let shards = ShardIndex::read(&index_path)?;
            let ckpt = Self::from_files(config, &shards.files(dir))?;
            shards.check(&ckpt)?;
            return Ok(ckpt);
        }
        let entries = std::fs::read_dir(dir).map_err(|source| CheckpointError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut paths = Vec::new();
        for entry in entries {
            let path = entry
                .map_err(|source| CheckpointError::Io {
                    path: dir.to_path_buf(),
                    source,
                })?
                .path();
            if path.extension().is_some_and(|e| e == "safetensors") && path.is_file() {
                paths.push(path);
            }
        }
        if paths.is_empty() {
            return Err(CheckpointError::NoWeights {
                dir: dir.to_path_buf(),
            });
        }
        paths.sort();
        Self::from_files(config, &paths)
    }

    /// One safetensors file and the config file beside it (a quantize config, or a model
    /// config with a `quantization_config`).
    pub fn open_file(
        safetensors: impl AsRef<Path>,
        config: impl AsRef<Path>,
    ) -> Result<Self, CheckpointError> {
        let config = QuantConfig::read(config.as_ref())?;
        Self::from_files(config, &[safetensors.as_ref().to_path_buf()])
    }

    /// Weight files read with a config already parsed.
    pub fn from_files(config: QuantConfig, paths: &[PathBuf]) -> Result<Self, CheckpointError> {
        let mut files = Vec::with_capacity(paths.len());
        let mut index = HashMap::new();
        for path in paths {
            let file = map(path)?;
            for name in file.metadata.offset_keys() {
                if let Some(&first) = index.get(&name) {
                    let first: &WeightFile = &files[first];
                    return Err(CheckpointError::DuplicateTensor {
                        tensor: name,
                        first: first.path.clone(),
                        second: path.clone(),
                    });
                }
                index.insert(name, files.len());
            }
            files.push(file);
        }
        Ok(Checkpoint {
            config,
            files,
            index,
        })
    }

    pub fn config(&self) -> &QuantConfig {
        &self.config
    }

    /// Every tensor name, sorted.
    pub fn tensor_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.index.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// The prefix of every quantized layer (each name that ends in `.qweight`, without
    /// it), sorted.
    pub fn layer_prefixes(&self) -> Vec<&str> {
        let mut prefixes: Vec<&str> = self
            .index
            .keys()
            .filter_map(|n| n.strip_suffix(".qweight"))
            .collect();
        prefixes.sort_unstable();
        prefixes
    }

    /// The quantized layer at `prefix`, every buffer checked against the format the
    /// config implies (see the module's documentation).
    pub fn layer(&self, prefix: &str) -> Result<CheckpointLayer<'_>, CheckpointError> {
        CheckpointLayer::new(self, prefix)
    }

    /// The file that holds `tensor`.
    fn shard_of(&self, tensor: &str) -> Option<&Path> {
        self.index
            .get(tensor)
            .map(|&f| self.files[f].path.as_path())
    }

    /// A tensor as stored, or `None` if no file has it.
    pub(crate) fn raw(&self, name: &str) -> Option<RawTensor<'_>> {
        let (name, &file) = self.index.get_key_value(name)?;
        let file = &self.files[file];
        let info = file.metadata.info(name)?;
        let (start, end) = info.data_offsets;
        // read_metadata checked that the offsets lie inside the file.
        let bytes = file
            .map
            .get(file.data_start + start..file.data_start + end)?;
        Some(RawTensor {
            name,
            dtype: info.dtype,
            shape: &info.shape,
            bytes,
        })
    }
}

fn map(path: &Path) -> Result<WeightFile, CheckpointError> {
    let io = |source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    // SAFETY: mapped read-only; the file must not change while mapped (documented on
    // `Checkpoint`), as safetensors' own loaders require.
    let map = unsafe { Mmap::map(&file) }.map_err(io)?;
    let (header_len, metadata) =
        SafeTensors::read_metadata(&map).map_err(|e| CheckpointError::Safetensors {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    Ok(WeightFile {
        path: path.to_path_buf(),
        map,
        data_start: 8 + header_len,
        metadata,
    })
}
