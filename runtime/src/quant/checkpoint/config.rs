//! A checkpoint's quantization config (`quantize_config.json` of GPTQModel and AutoGPTQ,
//! `quant_config.json` or `config.json`'s `quantization_config` of AutoAWQ and
//! transformers), mapped to the format imac reads.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::error::CheckpointError;
use crate::quant::ZeroStyle;

/// The layout a checkpoint's config implies for its quantized layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// GPTQ, 4-bit: `zeros` is [`ZeroStyle::MinusOne`] for `checkpoint_format` `"gptq"`
    /// (v1, the default) and [`ZeroStyle::Plain`] for `"gptq_v2"`. With `sym`, every zero
    /// point is 8 and the layer loads as `gptq(sym)`; with `desc_act`, each layer's g_idx
    /// is kept (act-order).
    Gptq {
        zeros: ZeroStyle,
        sym: bool,
        desc_act: bool,
    },
    /// AutoAWQ's GEMM layout, 4-bit, with zero points.
    AwqGemm,
}

/// What a checkpoint's quantization config says, as imac reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantConfig {
    /// The file it was read from.
    pub path: PathBuf,
    pub scheme: Scheme,
    /// The group size; `None` for `-1`, one group over all of K.
    pub group_size: Option<usize>,
}

/// Where a checkpoint directory's config may be, in the order looked at.
const CONFIG_FILES: [&str; 3] = ["quantize_config.json", "quant_config.json", "config.json"];

impl QuantConfig {
    /// The config of checkpoint directory `dir`: `quantize_config.json`,
    /// `quant_config.json`, or `config.json` with a `quantization_config`, in that order.
    /// Where a model's `config.json` has a `quantization_config` too (transformers and
    /// vLLM read that one first), the two must read the same, or the checkpoint would load
    /// one way here and another there: refused, naming both files.
    pub fn find(dir: &Path) -> Result<Self, CheckpointError> {
        let mut found = None;
        for name in CONFIG_FILES {
            let path = dir.join(name);
            if !path.is_file() {
                continue;
            }
            let value = read_json(&path)?;
            if name == "config.json" && value.get("quantization_config").is_none() {
                continue;
            }
            match found {
                None => found = Some(Self::from_json(&path, &value)?),
                Some(first) if name == "config.json" => {
                    return match Self::from_json(&path, &value) {
                        Ok(model) if model.reads_as(&first) => Ok(first),
                        Ok(model) => Err(CheckpointError::ConfigsDisagree {
                            first_reads: first.describe(),
                            second_reads: model.describe(),
                            first: first.path,
                            second: model.path,
                        }),
                        // What imac cannot read there, transformers may: the first is
                        // imac's (as GPTQModel's order has it).
                        Err(_) => Ok(first),
                    };
                }
                Some(_) => {}
            }
        }
        found.ok_or_else(|| CheckpointError::NoConfig {
            dir: dir.to_path_buf(),
        })
    }

    /// The same layout and group size (the files may differ in keys imac does not read).
    fn reads_as(&self, other: &QuantConfig) -> bool {
        (self.scheme, self.group_size) == (other.scheme, other.group_size)
    }

    /// What the config says, as imac reads it: `GPTQ v1, sym, desc_act, group 128`.
    fn describe(&self) -> String {
        let scheme = match self.scheme {
            Scheme::Gptq {
                zeros,
                sym,
                desc_act,
            } => {
                let version = match zeros {
                    ZeroStyle::MinusOne => "GPTQ v1",
                    _ => "GPTQ v2",
                };
                let flag = |on: bool, name: &str| {
                    if on {
                        format!(", {name}")
                    } else {
                        String::new()
                    }
                };
                format!(
                    "{version}{}{}",
                    flag(sym, "sym"),
                    flag(desc_act, "desc_act")
                )
            }
            Scheme::AwqGemm => "AWQ GEMM".to_string(),
        };
        match self.group_size {
            Some(g) => format!("{scheme}, group {g}"),
            None => format!("{scheme}, one group (-1)"),
        }
    }

    /// Reads a config file: a quantize config, or a model config with a
    /// `quantization_config` in it.
    pub fn read(path: &Path) -> Result<Self, CheckpointError> {
        Self::from_json(path, &read_json(path)?)
    }

    /// Maps a parsed config to the format imac reads; `path` names it in errors.
    pub fn from_json(path: &Path, value: &Value) -> Result<Self, CheckpointError> {
        let keys = Keys {
            path,
            map: object(path, "quantization_config", value)?,
        };
        // A model's config.json nests the quantization config.
        let keys = match keys.map.get("quantization_config") {
            Some(nested) => Keys {
                path,
                map: object(path, "quantization_config", nested)?,
            },
            None => keys,
        };
        // GPTQModel's newer configs name it `method` (`quant_method` its old alias).
        let method_key = if keys.map.contains_key("quant_method") {
            "quant_method"
        } else {
            "method"
        };
        let method = keys.string(method_key)?.map(|m| m.to_ascii_lowercase());
        let awq = match method.as_deref() {
            Some("gptq") => false,
            Some("awq") => true,
            // Old AutoAWQ configs have no quant_method, but `w_bit` and `version`.
            None => keys.map.contains_key("w_bit"),
            Some(other) => {
                return Err(keys.unsupported(
                    method_key,
                    other,
                    "this quantization method (imac reads gptq and awq)",
                ));
            }
        };
        let bits_key = if awq && !keys.map.contains_key("bits") {
            "w_bit"
        } else {
            "bits"
        };
        let bits = keys
            .int(bits_key)?
            .ok_or_else(|| keys.missing(bits_key, "4"))?;
        if bits != 4 {
            let what = match (awq, bits) {
                (false, 8) => "8-bit GPTQ (imac reads 4-bit GPTQ and AWQ)".to_string(),
                _ => format!("{bits}-bit weights (imac reads 4-bit GPTQ and AWQ)"),
            };
            return Err(keys.unsupported(bits_key, &bits.to_string(), &what));
        }
        let group_key = if awq && !keys.map.contains_key("group_size") {
            "q_group_size"
        } else {
            "group_size"
        };
        let group_size = match keys.int(group_key)? {
            Some(-1) => None,
            Some(g) if g > 0 => Some(g as usize),
            Some(g) => return Err(keys.bad(group_key, &g.to_string(), "-1 or a positive size")),
            None => return Err(keys.missing(group_key, "-1 or a positive size")),
        };
        // GPTQModel's per-module overrides: layers of other bits or group sizes, which the
        // shapes alone would not always tell apart (128 or 129 at K = 4096 without g_idx).
        if let Some(dynamic) = keys.map.get("dynamic")
            && !dynamic.is_null()
            && dynamic.as_object().is_none_or(|m| !m.is_empty())
        {
            return Err(keys.unsupported(
                "dynamic",
                &dynamic.to_string(),
                "per-module overrides of bits or group size (imac reads one config a checkpoint)",
            ));
        }
        let scheme = if awq {
            awq_scheme(&keys)?
        } else {
            gptq_scheme(&keys)?
        };
        Ok(QuantConfig {
            path: path.to_path_buf(),
            scheme,
            group_size,
        })
    }
}

fn awq_scheme(keys: &Keys) -> Result<Scheme, CheckpointError> {
    // AutoAWQ's default layout is GEMM; GEMV and the others pack differently. AutoAWQ names
    // it `version`, GPTQModel `checkpoint_format` (or `format`).
    let layout_key = ["version", "checkpoint_format", "format"]
        .into_iter()
        .find(|k| keys.map.contains_key(*k))
        .unwrap_or("version");
    if let Some(version) = keys.string(layout_key)?
        && !version.eq_ignore_ascii_case("gemm")
    {
        return Err(keys.unsupported(
            layout_key,
            version,
            &format!("the AWQ {version} layout (imac reads AWQ GEMM)"),
        ));
    }
    if keys.bool("zero_point")? == Some(false) {
        return Err(keys.unsupported(
            "zero_point",
            "false",
            "AWQ without zero points (imac reads AWQ GEMM with zero points)",
        ));
    }
    Ok(Scheme::AwqGemm)
}

fn gptq_scheme(keys: &Keys) -> Result<Scheme, CheckpointError> {
    if keys.bool("is_marlin_format")? == Some(true) {
        return Err(keys.unsupported(
            "is_marlin_format",
            "true",
            "the Marlin layout (imac reads GPTQ v1 and v2)",
        ));
    }
    if let Some(pack) = keys.string("pack_dtype")?
        && pack != "int32"
    {
        return Err(keys.unsupported("pack_dtype", pack, "packing into other words than int32"));
    }
    // GPTQModel writes `checkpoint_format`; some of its versions and tools `format`.
    let format_key = if keys.map.contains_key("checkpoint_format") {
        "checkpoint_format"
    } else {
        "format"
    };
    let zeros = match keys.string(format_key)? {
        None | Some("gptq") => ZeroStyle::MinusOne,
        Some("gptq_v2") => ZeroStyle::Plain,
        Some(other) => {
            return Err(keys.unsupported(
                format_key,
                other,
                &format!("the {other} layout (imac reads gptq and gptq_v2)"),
            ));
        }
    };
    Ok(Scheme::Gptq {
        zeros,
        // The writers store both keys; a hand-written config without them reads as
        // symmetric (their default), and as without act-order, which changes only whether
        // a g_idx is required: a layer's g_idx that is not the identity is kept either way.
        sym: keys.bool("sym")?.unwrap_or(true),
        desc_act: keys.bool("desc_act")?.unwrap_or(false),
    })
}

/// A checkpoint's JSON file (a config, the shard index), parsed; errors name the file.
pub(super) fn read_json(path: &Path) -> Result<Value, CheckpointError> {
    let text = std::fs::read_to_string(path).map_err(|source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| CheckpointError::ConfigKey {
        path: path.to_path_buf(),
        key: "(file)",
        value: format!("not JSON ({e})"),
        expected: "a JSON object",
    })
}

fn object<'v>(
    path: &Path,
    key: &'static str,
    value: &'v Value,
) -> Result<&'v Map<String, Value>, CheckpointError> {
    value.as_object().ok_or_else(|| CheckpointError::ConfigKey {
        path: path.to_path_buf(),
        key,
        value: value.to_string(),
        expected: "a JSON object",
    })
}

/// Typed reads of a config's keys, with errors that name the file and the key.
struct Keys<'a> {
    path: &'a Path,
    map: &'a Map<String, Value>,
}

impl Keys<'_> {
    fn bad(&self, key: &'static str, value: &str, expected: &'static str) -> CheckpointError {
        CheckpointError::ConfigKey {
            path: self.path.to_path_buf(),
            key,
            value: value.to_string(),
            expected,
        }
    }

    fn missing(&self, key: &'static str, expected: &'static str) -> CheckpointError {
        self.bad(key, "missing", expected)
    }

    fn unsupported(&self, key: &'static str, value: &str, what: &str) -> CheckpointError {
        CheckpointError::Unsupported {
            path: self.path.to_path_buf(),
            key,
            value: value.to_string(),
            what: what.to_string(),
        }
    }

    fn string(&self, key: &'static str) -> Result<Option<&str>, CheckpointError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.bad(key, &v.to_string(), "a string")),
        }
    }

    fn int(&self, key: &'static str) -> Result<Option<i64>, CheckpointError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| self.bad(key, &v.to_string(), "an integer")),
        }
    }

    fn bool(&self, key: &'static str) -> Result<Option<bool>, CheckpointError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.bad(key, &v.to_string(), "true or false")),
        }
    }
}
