//! Checkpoints written as GPTQModel, AutoGPTQ and AutoAWQ write them load with the format
//! their config implies, and dequantize to the intended weights bit for bit; malformed
//! ones are refused with a typed error naming the tensor or config key.

#[path = "fixtures/checkpoints.rs"]
mod fixtures;

use fixtures::{
    Entry, Intended, PREFIX, Writer, config, f16_entry, i32_entry, layer_tensors, write_checkpoint,
    write_config, write_safetensors,
};
use ima_runtime::half::f16;
use ima_runtime::quant::{
    Checkpoint, CheckpointError, QuantError, QuantFormat, Scheme, ZeroStyle, dequant_reference,
};
use safetensors::tensor::Dtype;

/// Loads `w` as written by `writer` and compares the host reference with the intended
/// weights, bit for bit; returns the layer's format and whether it kept g_idx.
fn load_and_compare(w: &Intended, writer: Writer) -> (QuantFormat, bool) {
    let dir = tempfile::tempdir().unwrap();
    write_checkpoint(dir.path(), w, writer);
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    assert_eq!(ckpt.layer_prefixes(), vec![PREFIX]);
    let layer = ckpt.layer(PREFIX).unwrap();
    assert_eq!(layer.plain_tensors(), [format!("{PREFIX}.bias")]);
    let host = layer.to_host::<f16>().unwrap();
    assert_eq!(
        (host.k(), host.n(), host.group()),
        (w.k, w.n, w.group.min(w.k))
    );
    let got = dequant_reference(&host);
    let want = w.weights();
    let wrong = got
        .iter()
        .zip(&want)
        .filter(|(g, w)| g.to_bits() != w.to_bits())
        .count();
    assert_eq!(
        wrong,
        0,
        "{writer:?} K={} N={} G={} sym={} desc_act={} ({} zero points of 0): {wrong} of {} \
         elements differ",
        w.k,
        w.n,
        w.group,
        w.sym,
        w.desc_act,
        w.zeros_of_0(),
        want.len()
    );
    (layer.format(), layer.has_g_idx())
}

#[test]
fn gptqmodel_v1_with_zero_points_of_0_is_exact() {
    // 4 of 128 zero points... and more: every 7th is 0.
    let w = Intended::new(256, 64, 64, 1, false, true, false);
    assert!(w.zeros_of_0() > 0);
    let got = load_and_compare(&w, Writer::GptqModelV1);
    assert_eq!(got, (QuantFormat::Gptq(ZeroStyle::MinusOne), false));
}

#[test]
fn gptqmodel_v1_and_autogptq_without_zero_points_of_0_are_exact() {
    let w = Intended::new(256, 64, 128, 2, false, false, false);
    assert_eq!(w.zeros_of_0(), 0);
    for writer in [Writer::GptqModelV1, Writer::AutoGptq] {
        let got = load_and_compare(&w, writer);
        assert_eq!(got, (QuantFormat::Gptq(ZeroStyle::MinusOne), false));
    }
}

#[test]
fn gptqmodel_v2_is_exact() {
    let w = Intended::new(128, 48, 32, 3, false, true, false);
    let got = load_and_compare(&w, Writer::GptqModelV2);
    assert_eq!(got, (QuantFormat::Gptq(ZeroStyle::Plain), false));
}

#[test]
fn symmetric_checkpoints_load_as_gptq_sym() {
    let w = Intended::new(128, 64, 64, 4, true, false, false);
    for writer in [Writer::GptqModelV1, Writer::GptqModelV2, Writer::AutoGptq] {
        let got = load_and_compare(&w, writer);
        assert_eq!(got, (QuantFormat::Gptq(ZeroStyle::Symmetric), false));
    }
}

#[test]
fn act_order_checkpoints_keep_g_idx() {
    let w = Intended::new(256, 32, 64, 5, false, true, true);
    assert_eq!(
        load_and_compare(&w, Writer::GptqModelV1),
        (QuantFormat::Gptq(ZeroStyle::MinusOne), true)
    );
    assert_eq!(
        load_and_compare(&w, Writer::GptqModelV2),
        (QuantFormat::Gptq(ZeroStyle::Plain), true)
    );
    let sym = Intended::new(256, 32, 64, 6, true, false, true);
    assert_eq!(
        load_and_compare(&sym, Writer::GptqModelV1),
        (QuantFormat::Gptq(ZeroStyle::Symmetric), true)
    );
}

#[test]
fn ragged_k_loads_exactly() {
    // K no multiple of G (a partial last group); K no multiple of 8 (g_idx gives K);
    // G past K (one group); one group by -1 is the same as G = K.
    for (k, n, g) in [(200, 64, 64), (100, 16, 32), (72, 8, 128)] {
        for writer in [Writer::GptqModelV1, Writer::GptqModelV2] {
            let w = Intended::new(k, n, g, 7, false, true, false);
            load_and_compare(&w, writer);
            let w = Intended::new(k, n, g, 8, false, true, true);
            load_and_compare(&w, writer);
        }
    }
    let w = Intended::new(200, 64, 64, 9, false, true, false);
    assert_eq!(
        load_and_compare(&w, Writer::AutoAwq),
        (QuantFormat::Awq, false)
    );
}

#[test]
fn autoawq_gemm_is_exact() {
    let w = Intended::new(256, 64, 128, 10, false, true, false);
    assert_eq!(
        load_and_compare(&w, Writer::AutoAwq),
        (QuantFormat::Awq, false)
    );
    let w = Intended::new(64, 24, 64, 11, false, false, false);
    load_and_compare(&w, Writer::AutoAwq);
}

#[test]
fn group_size_minus_one_is_one_group() {
    let w = Intended::new(96, 16, 96, 12, false, true, false);
    let dir = tempfile::tempdir().unwrap();
    write_checkpoint(dir.path(), &w, Writer::GptqModelV1);
    let (file, mut value) = config(&w, Writer::GptqModelV1);
    value["group_size"] = (-1).into();
    write_config(dir.path(), file, &value);
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    assert_eq!(ckpt.config().group_size, None);
    let host = ckpt.layer(PREFIX).unwrap().to_host::<f16>().unwrap();
    assert_eq!(host.group(), 96);
    assert_eq!(dequant_reference(&host), w.weights());
}

#[test]
fn configs_map_to_schemes() {
    let w = Intended::new(64, 8, 32, 13, false, false, true);
    let dir = tempfile::tempdir().unwrap();
    write_checkpoint(dir.path(), &w, Writer::GptqModelV2);
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    assert_eq!(
        ckpt.config().scheme,
        Scheme::Gptq {
            zeros: ZeroStyle::Plain,
            sym: false,
            desc_act: true
        }
    );
    // One file and its config, named.
    let ckpt = Checkpoint::open_file(
        dir.path().join("model.safetensors"),
        dir.path().join("quantize_config.json"),
    )
    .unwrap();
    assert_eq!(ckpt.config().group_size, Some(32));
}

#[test]
fn unaligned_tensor_data_is_copied_and_read_right() {
    // A file whose header length is odd puts every tensor at an odd address: legal
    // safetensors, though no writer of the library makes it.
    let w = Intended::new(64, 16, 32, 14, false, true, false);
    let entries = layer_tensors(&w, Writer::GptqModelV1, PREFIX);
    let dir = tempfile::tempdir().unwrap();
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in &entries {
        let start = data.len();
        data.extend_from_slice(bytes);
        header.insert(
            name.clone(),
            serde_json::json!({
                "dtype": format!("{dtype:?}"),
                "shape": shape,
                "data_offsets": [start, data.len()]
            }),
        );
    }
    let mut header = serde_json::to_string(&header).unwrap();
    if header.len().is_multiple_of(2) {
        header.push(' ');
    }
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&data);
    std::fs::write(dir.path().join("model.safetensors"), file).unwrap();
    let (name, value) = config(&w, Writer::GptqModelV1);
    write_config(dir.path(), name, &value);
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    let host = ckpt.layer(PREFIX).unwrap().to_host::<f16>().unwrap();
    assert_eq!(dequant_reference(&host), w.weights());
}

#[test]
fn sharded_checkpoints_are_one_index() {
    let w = Intended::new(64, 16, 32, 15, false, true, false);
    let dir = tempfile::tempdir().unwrap();
    let mut entries = layer_tensors(&w, Writer::GptqModelV1, PREFIX);
    let second = entries.split_off(2);
    write_safetensors(
        &dir.path().join("model-00001-of-00002.safetensors"),
        &entries,
    );
    write_safetensors(
        &dir.path().join("model-00002-of-00002.safetensors"),
        &second,
    );
    let (name, value) = config(&w, Writer::GptqModelV1);
    write_config(dir.path(), name, &value);
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    let host = ckpt.layer(PREFIX).unwrap().to_host::<f16>().unwrap();
    assert_eq!(dequant_reference(&host), w.weights());
    // The same tensor in two shards is refused.
    write_safetensors(
        &dir.path().join("model-00003-of-00003.safetensors"),
        &second,
    );
    assert!(matches!(
        Checkpoint::open(dir.path()),
        Err(CheckpointError::DuplicateTensor { .. })
    ));
    // With transformers' index, only the shards it names are read: the stray third goes
    // unread, and each tensor must be where the index says.
    let shard = |i: usize| format!("model-0000{i}-of-00002.safetensors");
    let weight_map = |moved: Option<&str>| {
        let mut map = serde_json::Map::new();
        for (i, part) in [(1, &entries), (2, &second)] {
            for (name, ..) in part.iter() {
                let file = match moved == Some(name.as_str()) {
                    true => shard(3 - i),
                    false => shard(i),
                };
                map.insert(name.clone(), file.into());
            }
        }
        map
    };
    let index = dir.path().join("model.safetensors.index.json");
    let write_index = |map: serde_json::Map<String, serde_json::Value>| {
        let value = serde_json::json!({"metadata": {"total_size": 0}, "weight_map": map});
        std::fs::write(&index, value.to_string()).unwrap();
    };
    write_index(weight_map(None));
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    let host = ckpt.layer(PREFIX).unwrap().to_host::<f16>().unwrap();
    assert_eq!(dequant_reference(&host), w.weights());
    let moved = &entries[0].0;
    write_index(weight_map(Some(moved)));
    let e = Checkpoint::open(dir.path()).unwrap_err();
    assert!(
        matches!(&e, CheckpointError::NotWhereIndexed { tensor, shard: s, found: Some(f), .. }
            if tensor == moved && s == &shard(2) && f.ends_with(shard(1))),
        "{e}"
    );
    let mut map = weight_map(None);
    map.remove(moved);
    write_index(map);
    let e = Checkpoint::open(dir.path()).unwrap_err();
    assert!(
        matches!(&e, CheckpointError::NotIndexed { tensor, .. } if tensor == moved),
        "{e}"
    );
    let mut map = weight_map(None);
    map.insert(moved.clone(), "../model-00001-of-00002.safetensors".into());
    write_index(map);
    let e = Checkpoint::open(dir.path()).unwrap_err();
    assert!(
        matches!(
            &e,
            CheckpointError::ConfigKey {
                key: "weight_map",
                ..
            }
        ),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------
// Malformed checkpoints, one per error class

/// A GPTQModel v1 checkpoint with its tensors changed by `edit` and its config by
/// `edit_config`, opened and its layer taken.
fn malformed(
    edit: impl FnOnce(&mut Vec<Entry>),
    edit_config: impl FnOnce(&mut serde_json::Value),
) -> CheckpointError {
    let w = Intended::new(128, 32, 64, 16, false, true, false);
    let dir = tempfile::tempdir().unwrap();
    let mut entries = layer_tensors(&w, Writer::GptqModelV1, PREFIX);
    edit(&mut entries);
    write_safetensors(&dir.path().join("model.safetensors"), &entries);
    let (file, mut value) = config(&w, Writer::GptqModelV1);
    edit_config(&mut value);
    write_config(dir.path(), file, &value);
    match Checkpoint::open(dir.path()).and_then(|c| c.layer(PREFIX).map(|_| ())) {
        Err(e) => e,
        Ok(()) => panic!("the malformed checkpoint loaded"),
    }
}

fn remove(entries: &mut Vec<Entry>, part: &str) -> Entry {
    let name = format!("{PREFIX}.{part}");
    let i = entries.iter().position(|e| e.0 == name).unwrap();
    entries.remove(i)
}

#[test]
fn a_missing_tensor_is_named() {
    let e = malformed(|t| drop(remove(t, "scales")), |_| {});
    assert!(
        matches!(&e, CheckpointError::MissingTensor { tensor, .. } if tensor == &format!("{PREFIX}.scales")),
        "{e}"
    );
    let e = malformed(|t| drop(remove(t, "qzeros")), |_| {});
    assert!(
        matches!(&e, CheckpointError::MissingTensor { tensor, .. } if tensor.ends_with(".qzeros")),
        "{e}"
    );
    let e = malformed(
        |t| drop(remove(t, "g_idx")),
        |c| c["desc_act"] = true.into(),
    );
    assert!(
        matches!(&e, CheckpointError::MissingTensor { tensor, .. } if tensor.ends_with(".g_idx")),
        "{e}"
    );
}

#[test]
fn transposed_scales_are_refused_with_both_shapes() {
    // scales [2, 32] stored as [32, 2]: the same 64 values.
    let e = malformed(
        |t| {
            let (name, _, _, bytes) = remove(t, "scales");
            let values: Vec<f16> = bytes
                .chunks_exact(2)
                .map(|b| f16::from_le_bytes([b[0], b[1]]))
                .collect();
            let mut transposed = vec![f16::ZERO; values.len()];
            for g in 0..2 {
                for n in 0..32 {
                    transposed[n * 2 + g] = values[g * 32 + n];
                }
            }
            t.push(f16_entry(&name, &transposed, vec![32, 2]));
        },
        |_| {},
    );
    match &e {
        CheckpointError::Shape {
            tensor,
            expected,
            actual,
            ..
        } => {
            assert_eq!(tensor, &format!("{PREFIX}.scales"));
            assert_eq!(
                (expected.as_slice(), actual.as_slice()),
                (&[2, 32][..], &[32, 2][..])
            );
        }
        _ => panic!("{e}"),
    }
    assert!(e.to_string().contains("[ceil(K/G), N]"), "{e}");
}

#[test]
fn a_wrong_dtype_is_refused() {
    let e = malformed(
        |t| {
            let (name, _, shape, bytes) = remove(t, "scales");
            let f32s: Vec<u8> = bytes
                .chunks_exact(2)
                .flat_map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32().to_le_bytes())
                .collect();
            t.push((name, Dtype::F32, shape, f32s));
        },
        |_| {},
    );
    assert!(
        matches!(&e, CheckpointError::Dtype { tensor, actual, .. } if tensor.ends_with(".scales") && actual == "F32"),
        "{e}"
    );
    // f16 scales read as bf16: refused, not reinterpreted.
    let w = Intended::new(64, 8, 32, 17, false, false, false);
    let dir = tempfile::tempdir().unwrap();
    write_checkpoint(dir.path(), &w, Writer::GptqModelV2);
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    let e = ckpt
        .layer(PREFIX)
        .unwrap()
        .to_host::<half::bf16>()
        .unwrap_err();
    assert!(matches!(e, CheckpointError::Dtype { .. }), "{e}");
}

#[test]
fn unknown_and_unsupported_formats_are_refused_by_name() {
    let cases: [(&str, serde_json::Value, &str); 6] = [
        ("checkpoint_format", "marlin".into(), "marlin"),
        ("quant_method", "bitnet".into(), "bitnet"),
        ("bits", 8.into(), "8-bit GPTQ"),
        ("bits", 3.into(), "3-bit"),
        ("pack_dtype", "int16".into(), "int16"),
        (
            "dynamic",
            serde_json::json!({"+:.*down_proj.*": {"bits": 8}}),
            "per-module overrides",
        ),
    ];
    for (key, value, named) in cases {
        let e = malformed(|_| {}, |c| c[key] = value.clone());
        assert!(
            matches!(&e, CheckpointError::Unsupported { key: k, .. } if *k == key),
            "{key}: {e}"
        );
        assert!(e.to_string().contains(named), "{e}");
    }
    // AWQ GEMV.
    let w = Intended::new(64, 16, 32, 18, false, false, false);
    let dir = tempfile::tempdir().unwrap();
    write_checkpoint(dir.path(), &w, Writer::AutoAwq);
    let (file, mut value) = config(&w, Writer::AutoAwq);
    value["quantization_config"]["version"] = "gemv".into();
    write_config(dir.path(), file, &value);
    let e = Checkpoint::open(dir.path()).unwrap_err();
    assert!(
        matches!(&e, CheckpointError::Unsupported { key: "version", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("gemv"), "{e}");
    // GPTQModel's newer keys: `method` for quant_method, the AWQ layout as its format.
    let e = malformed(
        |_| {},
        |c| {
            c.as_object_mut().unwrap().remove("quant_method");
            c["method"] = "bitnet".into();
        },
    );
    assert!(
        matches!(&e, CheckpointError::Unsupported { key: "method", .. }),
        "{e}"
    );
    let (file, mut value) = config(&w, Writer::AutoAwq);
    let q = value["quantization_config"].as_object_mut().unwrap();
    q.remove("version");
    q.insert("checkpoint_format".into(), "gemv_fast".into());
    write_config(dir.path(), file, &value);
    let e = Checkpoint::open(dir.path()).unwrap_err();
    assert!(
        matches!(
            &e,
            CheckpointError::Unsupported {
                key: "checkpoint_format",
                ..
            }
        ),
        "{e}"
    );
    // No overrides is one config.
    let w = Intended::new(128, 32, 64, 16, false, true, false);
    let dir = tempfile::tempdir().unwrap();
    write_checkpoint(dir.path(), &w, Writer::GptqModelV1);
    let (file, mut value) = config(&w, Writer::GptqModelV1);
    value["dynamic"] = serde_json::json!({});
    write_config(dir.path(), file, &value);
    Checkpoint::open(dir.path()).unwrap().layer(PREFIX).unwrap();
}

#[test]
fn a_model_config_that_reads_otherwise_is_refused_naming_both_files() {
    let w = Intended::new(128, 32, 64, 16, false, true, false);
    let dir = tempfile::tempdir().unwrap();
    write_checkpoint(dir.path(), &w, Writer::GptqModelV1);
    let (file, value) = config(&w, Writer::GptqModelV1);
    assert_eq!(file, "quantize_config.json");
    // The same in config.json (as transformers writes it, with keys imac does not read).
    let mut model =
        serde_json::json!({"model_type": "llama", "quantization_config": value.clone()});
    model["quantization_config"]["use_exllama"] = false.into();
    std::fs::write(dir.path().join("config.json"), model.to_string()).unwrap();
    Checkpoint::open(dir.path()).unwrap().layer(PREFIX).unwrap();
    // Another group size there.
    model["quantization_config"]["group_size"] = 128.into();
    std::fs::write(dir.path().join("config.json"), model.to_string()).unwrap();
    let e = Checkpoint::open(dir.path()).unwrap_err();
    assert!(
        matches!(&e, CheckpointError::ConfigsDisagree { first, second, .. }
            if first.ends_with("quantize_config.json") && second.ends_with("config.json")),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.contains("quantize_config.json reads as GPTQ v1, group 64, but ")
            && text.contains("config.json as GPTQ v1, group 128"),
        "{text}"
    );
}

#[test]
fn bad_config_values_and_missing_configs_are_refused() {
    let e = malformed(|_| {}, |c| c["group_size"] = 0.into());
    assert!(
        matches!(
            &e,
            CheckpointError::ConfigKey {
                key: "group_size",
                ..
            }
        ),
        "{e}"
    );
    let e = malformed(|_| {}, |c| c["sym"] = "yes".into());
    assert!(
        matches!(&e, CheckpointError::ConfigKey { key: "sym", .. }),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        Checkpoint::open(dir.path()),
        Err(CheckpointError::NoConfig { .. })
    ));
}

#[test]
fn sym_with_a_zero_point_other_than_8_is_refused() {
    // The config says sym, the file has asymmetric zeros: refused, not read as 8.
    let e = malformed(|_| {}, |c| c["sym"] = true.into());
    assert!(
        matches!(&e, CheckpointError::SymmetricZero { tensor, .. } if tensor.ends_with(".qzeros")),
        "{e}"
    );
}

#[test]
fn an_out_of_range_g_idx_is_refused() {
    let e = malformed(
        |t| {
            let (name, _, shape, _) = remove(t, "g_idx");
            let mut g: Vec<u32> = (0..128).map(|r| r / 64).collect();
            g[5] = 2;
            t.push(i32_entry(&name, &g, shape));
        },
        |_| {},
    );
    assert!(
        matches!(
            &e,
            CheckpointError::Quant {
                source: QuantError::GIdxValue {
                    row: 5,
                    value: 2,
                    ..
                },
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn a_qweight_of_the_wrong_rows_is_refused() {
    // 8 rows of words where K = 128 (from g_idx) needs 16.
    let e = malformed(
        |t| {
            let (name, _, _, bytes) = remove(t, "qweight");
            let words: Vec<u32> = bytes[..bytes.len() / 2]
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            t.push(i32_entry(&name, &words, vec![8, 32]));
        },
        |_| {},
    );
    // K comes from g_idx: the two disagree, and the error names both.
    assert!(
        matches!(&e, CheckpointError::GIdxLen { tensor, len: 128, rows: 8, lo: 57, hi: 64 } if tensor.ends_with(".g_idx")),
        "{e}"
    );
    assert!(e.to_string().ends_with(
        ".g_idx has 128 entries, one a row of K, but qweight's 8 packed rows hold K in 57..=64"
    ));
}

#[test]
fn a_g_idx_that_does_not_fit_qweight_is_refused_by_name() {
    // qweight's 16 rows of words hold K in 121..=128; a g_idx of 120 entries, or none.
    for len in [120u32, 0] {
        let e = malformed(
            |t| {
                let (name, ..) = remove(t, "g_idx");
                let g: Vec<u32> = (0..len).map(|r| r / 64).collect();
                t.push(i32_entry(&name, &g, vec![len as usize]));
            },
            |_| {},
        );
        assert!(
            matches!(&e, CheckpointError::GIdxLen { tensor, len: l, rows: 16, lo: 121, hi: 128 } if tensor.ends_with(".g_idx") && *l == len as usize),
            "{e}"
        );
    }
}

#[test]
fn a_layer_with_no_elements_is_refused_whatever_k_it_claims() {
    // A header's qweight of [2^58, 0] with no bytes would give K = 2^61 and N = 0.
    let e = malformed(
        |t| {
            let (name, ..) = remove(t, "qweight");
            t.push(i32_entry(&name, &[], vec![1 << 58, 0]));
            let (name, ..) = remove(t, "g_idx");
            t.push(i32_entry(&name, &[], vec![0]));
        },
        |_| {},
    );
    assert!(
        matches!(&e, CheckpointError::NoElements { tensor, actual } if tensor.ends_with(".qweight") && actual == &[1 << 58, 0]),
        "{e}"
    );
    assert!(e.to_string().contains("with no elements"), "{e}");
}
