//! A sharded checkpoint's index, `model.safetensors.index.json`: which shard holds each
//! tensor (its `weight_map`), as transformers writes and reads it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::Checkpoint;
use super::config::read_json;
use super::error::CheckpointError;

/// The index's file name, beside the shards.
pub(super) const SHARD_INDEX: &str = "model.safetensors.index.json";

/// Tensor name to the file name of its shard.
pub(super) struct ShardIndex {
    path: PathBuf,
    weight_map: BTreeMap<String, String>,
}

impl ShardIndex {
    /// Reads the index at `path`; each shard must be a file name (no directory in it).
    pub(super) fn read(path: &Path) -> Result<ShardIndex, CheckpointError> {
        let bad = |value: String, expected: &'static str| CheckpointError::ConfigKey {
            path: path.to_path_buf(),
            key: "weight_map",
            value,
            expected,
        };
        let value = read_json(path)?;
        let map = match value.get("weight_map") {
            Some(serde_json::Value::Object(map)) => map,
            Some(v) => return Err(bad(v.to_string(), "an object of tensor names to shards")),
            None => return Err(bad("missing".into(), "an object of tensor names to shards")),
        };
        let mut weight_map = BTreeMap::new();
        for (tensor, shard) in map {
            let shard = shard
                .as_str()
                .filter(|s| !s.is_empty() && Path::new(s).file_name() == Some(s.as_ref()))
                .ok_or_else(|| {
                    bad(
                        format!("{shard} for {tensor}"),
                        "a shard's file name, beside the index",
                    )
                })?;
            weight_map.insert(tensor.clone(), shard.to_string());
        }
        Ok(ShardIndex {
            path: path.to_path_buf(),
            weight_map,
        })
    }

    /// The shards the index names, in `dir`, sorted.
    pub(super) fn files(&self, dir: &Path) -> Vec<PathBuf> {
        let names: BTreeSet<&String> = self.weight_map.values().collect();
        names.into_iter().map(|n| dir.join(n)).collect()
    }

    /// Every tensor the index names is in the shard it names, and every tensor of the
    /// shards is in the index.
    pub(super) fn check(&self, ckpt: &Checkpoint) -> Result<(), CheckpointError> {
        for (tensor, shard) in &self.weight_map {
            let found = ckpt.shard_of(tensor);
            if found.and_then(Path::file_name) != Some(shard.as_ref()) {
                return Err(CheckpointError::NotWhereIndexed {
                    index: self.path.clone(),
                    tensor: tensor.clone(),
                    shard: shard.clone(),
                    found: found.map(Path::to_path_buf),
                });
            }
        }
        if let Some(tensor) = ckpt
            .tensor_names()
            .into_iter()
            .find(|t| !self.weight_map.contains_key(*t))
        {
            return Err(CheckpointError::NotIndexed {
                index: self.path.clone(),
                tensor: tensor.to_string(),
                found: ckpt
                    .shard_of(tensor)
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
            });
        }
        Ok(())
    }
}
