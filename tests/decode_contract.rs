//! The decode layer's launches (examples/decode_layer, docs/decode-layer.md) checked on the
//! CPU with fake tensors at Llama 3 8B's shapes: each launch passes as the layer makes it at
//! B = 1, 8 and 32, and the mismatches between its kernels that become illegal memory
//! accesses in a serving engine are refused before any launch, each error naming the
//! argument, the dimension, what it should be and the argument that set it (the expected
//! values worked out by hand from the specs); the index tensors' bad entries are named by
//! the host validation, as `validate` and the kernels report them (tests/paged_gpu.rs).

mod common;
#[path = "../examples/decode_layer/layer.rs"]
#[allow(dead_code)]
mod layer;

#[allow(dead_code)]
#[path = "../runtime/tests/common/fake.rs"]
mod fake;

use common::values::{self, arg};
use fake::{Fake, refused, run, spread};
use ima::{DType, IndexValue, KernelContract, Scalar, ValueFault};
use layer::{Config, ProjectionKernel, decode, gemm, gemm_tma, paged, quant};

/// Llama 3 8B's layer (layer.rs's `Config::LLAMA_8B`).
const CFG: Config = Config::LLAMA_8B;
const HIDDEN: usize = CFG.hidden;
const HQ: usize = CFG.heads;
const HKV: usize = CFG.kv_heads;
const D: usize = CFG.head_dim;
const INTERMEDIATE: usize = CFG.intermediate;
const G: usize = CFG.group;
const BS: usize = CFG.block_size;
const MAXPOS: usize = CFG.max_positions;
/// Pages a sequence's table: contexts of up to 1024 tokens.
const P: usize = 64;
/// The fused QKV projection's width: HQ query heads, then HKV key and HKV value heads.
const QKV: usize = (HQ + 2 * HKV) * D;
/// An H200's SMs, which the layer's pick of a GEMV reads.
const SMS: usize = 132;

/// A GPTQ weight `q4[K, N] gptq(group = G)` as a launch passes it: the logical `[K, N, G]`,
/// then qweight `[K / 8, N]`, qzeros `[K / G, N / 8]` and scales `[K / G, N]`.
fn gptq(k: usize, n: usize, g: usize) -> [Fake; 4] {
    [
        Fake::new(DType::F16, &[k, n, g], 0),
        Fake::new(DType::I32, &[k.div_ceil(8), n], 0),
        Fake::new(DType::I32, &[k.div_ceil(g), n.div_ceil(8)], 0),
        Fake::new(DType::F16, &[k.div_ceil(g), n], 0),
    ]
}

fn f16(shape: &[usize]) -> Fake {
    Fake::new(DType::F16, shape, 0)
}

/// add_rms_norm(x, residual, w, y) on `b` rows.
fn norm(b: usize) -> Vec<Fake> {
    spread(vec![
        f16(&[b, HIDDEN]),
        f16(&[b, HIDDEN]),
        f16(&[HIDDEN]),
        f16(&[b, HIDDEN]),
    ])
}

/// The projection kernel the layer takes for `rows` rows of a `k x n` weight into `ny`
/// columns (layer.rs's pick on an H200, where gptq_gemm_wg32 loads), and its arguments.
fn projection(rows: usize, k: usize, n: usize, ny: usize) -> (&'static KernelContract, Vec<Fake>) {
    let x = f16(&[rows, k]);
    let y = f16(&[rows, ny]);
    let [w, qweight, qzeros, scales] = gptq(k, n, G);
    let picked = ProjectionKernel::pick(rows, k, n, SMS, true);
    let c = contract_of(picked);
    if picked == ProjectionKernel::Warpgroup {
        let part = Fake::new(DType::F32, &[gemm_tma::BLOCKS as usize, 3, 4, 128, 4], 0);
        let arrivals = Fake::new(DType::I32, &[rows.div_ceil(64), n.div_ceil(64)], 0);
        return (
            c,
            spread(vec![x, w, qweight, qzeros, scales, part, arrivals, y]),
        );
    }
    (c, spread(vec![x, w, qweight, qzeros, scales, y]))
}

/// The kernel a [`ProjectionKernel`] launches.
fn contract_of(kernel: ProjectionKernel) -> &'static KernelContract {
    match kernel {
        ProjectionKernel::Warpgroup => gemm_tma::GptqGemmWg32::CONTRACT,
        ProjectionKernel::Wide => quant::GptqGemv::CONTRACT,
        ProjectionKernel::Narrow => decode::GptqGemvNarrow::CONTRACT,
        ProjectionKernel::Narrow12 => decode::GptqGemvNarrow12::CONTRACT,
        ProjectionKernel::Gemm => gemm::GptqGemm::CONTRACT,
    }
}

/// paged_attn_rope's arguments for `b` sequences over caches of `nb` pages.
fn attention(b: usize, nb: usize) -> Vec<Fake> {
    let parts = (P * BS).div_ceil(paged::PART as usize);
    spread(vec![
        f16(&[b, QKV]),
        Fake::new(DType::I64, &[b], 0),
        Fake::new(DType::F32, &[MAXPOS, D], 0),
        Fake::new(DType::I64, &[b], 0),
        f16(&[nb, BS, HKV, D]),
        f16(&[nb, BS, HKV, D]),
        Fake::new(DType::I32, &[b, P], 0),
        Fake::new(DType::I32, &[b], 0),
        Fake::new(DType::F32, &[b, HQ, parts, D], 0),
        Fake::new(DType::F32, &[b, HQ, parts], 0),
        Fake::new(DType::I32, &[b, HQ], 0),
        f16(&[b, HQ, D]),
    ])
}

const EPS: [Scalar; 1] = [Scalar::F32(1e-5)];
/// paged_attn_rope's contract, which most of these cases break.
const ROPE: &KernelContract = paged::PagedAttnRope::CONTRACT;
const SCALE: [Scalar; 1] = [Scalar::F32(0.088_388_35)];

#[test]
fn every_launch_of_the_layer_passes_at_b1_b8_and_b32() {
    for b in [1, 8, 32] {
        let nb = b * P;
        assert!(
            run(decode::AddRmsNorm::CONTRACT, &norm(b), &EPS).is_ok(),
            "norm at B = {b}"
        );
        for (what, k, n) in CFG.projections() {
            // SiluAndMul fused into gate/up: y half as wide as its gate and up columns.
            let ny = if what == "gate_up" { n / 2 } else { n };
            let (c, args) = projection(b, k, n, ny);
            let plan = run(c, &args, &[]);
            assert!(plan.is_ok(), "{what} on {} at B = {b}: {plan:?}", c.name);
        }
        let plan = run(ROPE, &attention(b, nb), &SCALE);
        assert!(plan.is_ok(), "paged_attn_rope at B = {b}: {plan:?}");
    }
    // The kernels the layer's pick takes, as docs/decode-layer.md's table names them.
    let picked = |rows, k, n| projection(rows, k, n, n).0.name;
    assert_eq!(picked(1, HIDDEN, QKV), "gptq_gemv_narrow");
    assert_eq!(picked(1, HIDDEN, 2 * INTERMEDIATE), "gptq_gemv");
    assert_eq!(picked(1, HQ * D, HIDDEN), "gptq_gemv_narrow12");
    assert_eq!(picked(1, INTERMEDIATE, HIDDEN), "gptq_gemv_narrow12");
    assert_eq!(picked(8, HIDDEN, QKV), "gptq_gemm");
    assert_eq!(picked(32, HIDDEN, QKV), "gptq_gemm_wg32");
    assert_eq!(picked(32, HQ * D, HIDDEN), "gptq_gemm_wg32");
    assert_eq!(picked(8, HQ * D, HIDDEN), "gptq_gemm");
}

/// The pick's edges, worked out from its rule (docs/decode-layer.md): one row takes
/// 128-column blocks once they number the SMs (N >= 131 * 128 + 1 on 132 SMs), 16-column
/// blocks of 12 warps while those number at most twice the SMs (N <= 264 * 16), 17 to 32
/// rows take the warpgroup kernel from 2^24 weights where it loads, and every other
/// batch the tensor-core GEMM.
#[test]
fn the_projection_pick_changes_kernel_where_its_rule_says() {
    use ProjectionKernel::{Gemm, Narrow, Narrow12, Warpgroup, Wide};
    let pick = |rows, k, n, warpgroup| ProjectionKernel::pick(rows, k, n, SMS, warpgroup);
    // ceil(N / 128) >= 132: N = 131 * 128 + 1 = 16769 is the first.
    assert_eq!(pick(1, HIDDEN, 16768, true), Narrow);
    assert_eq!(pick(1, HIDDEN, 16769, true), Wide);
    // ceil(N / 16) <= 264: N = 264 * 16 = 4224 is the last; O and down (4096) take it.
    assert_eq!(pick(1, HIDDEN, 4224, true), Narrow12);
    assert_eq!(pick(1, HIDDEN, 4232, true), Narrow);
    assert_eq!(pick(1, INTERMEDIATE, HIDDEN, true), Narrow12);
    assert_eq!(pick(1, HIDDEN, QKV, true), Narrow);
    // K N >= 2^24 = 16777216: 4096 x 4096 (O) is exactly that, 4096 x 4088 short of it.
    assert_eq!(pick(17, 4096, 4096, true), Warpgroup);
    assert_eq!(pick(17, 4096, 4088, true), Gemm);
    for (rows, want) in [
        (2, Gemm),
        (16, Gemm),
        (17, Warpgroup),
        (32, Warpgroup),
        (33, Gemm),
    ] {
        assert_eq!(pick(rows, HIDDEN, QKV, true), want, "{rows} rows");
        // Where gptq_gemm_wg32 does not load (compute capability other than 9.0).
        assert_eq!(
            pick(rows, HIDDEN, QKV, false),
            Gemm,
            "{rows} rows, no warpgroup kernel"
        );
    }
}

/// decode_layer.py's `projection_kernel` (the Python door's layer) picks the kernel that
/// layer.rs's `ProjectionKernel::pick` picks, on every case of a grid around the rule's
/// edges for devices of 78 to 144 SMs. python3 runs the function and the constant it reads,
/// taken out of the file with Python's `ast` (the module itself imports torch and the
/// kernels' packages, which this machine need not have), with stand-ins for the two
/// packages' spec constants it reads (`qk.GEMV_COLUMNS`, `dk.NARROW_COLUMNS`,
/// `dk.NARROW12_BLOCKS_AN_SM`), given the values of the Rust modules' constants from the
/// same specs.
#[test]
fn the_python_layer_picks_the_kernels_layer_rs_picks() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    const RUN_PICK: &str = r#"
import ast, sys
path = sys.argv[1]
tree = ast.parse(open(path).read(), path)
keep = [s for s in tree.body
        if isinstance(s, ast.FunctionDef) and s.name == "projection_kernel"
        or isinstance(s, ast.Assign) and [getattr(t, "id", None) for t in s.targets] == ["WARPGROUP_MIN_WEIGHTS"]]
if len(keep) != 2:
    sys.exit(path + ": projection_kernel and WARPGROUP_MIN_WEIGHTS not found at the top level")
from types import SimpleNamespace
scope = {"qk": SimpleNamespace(GEMV_COLUMNS=int(sys.argv[2])),
         "dk": SimpleNamespace(NARROW_COLUMNS=int(sys.argv[3]),
                               NARROW12_BLOCKS_AN_SM=int(sys.argv[4]))}
exec(compile(ast.Module(body=keep, type_ignores=[]), path, "exec"), scope)
# All the cases read before the first answer, so that neither side waits on a full pipe.
for line in sys.stdin.read().splitlines():
    rows, k, n, sms, warpgroup = map(int, line.split())
    print(scope["projection_kernel"](rows, k, n, sms, bool(warpgroup)))
"#;
    let mut cases = Vec::new();
    for sms in [78, 108, 132, 144] {
        let edges = [
            128 * (sms - 1),
            128 * (sms - 1) + 1,
            32 * sms,
            32 * sms + 1,
            32 * sms + 16,
        ];
        for n in edges
            .into_iter()
            .chain([16, 4088, HIDDEN, QKV, 2 * INTERMEDIATE])
        {
            for k in [4095, HIDDEN, INTERMEDIATE] {
                for rows in [1, 2, 8, 16, 17, 24, 32, 33, 64] {
                    for warpgroup in [false, true] {
                        cases.push((rows, k, n, sms, warpgroup));
                    }
                }
            }
        }
    }
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/decode_layer/decode_layer.py"
    );
    let mut python = Command::new("python3")
        .args([
            "-c",
            RUN_PICK,
            script,
            &quant::GEMV_COLUMNS.to_string(),
            &decode::NARROW_COLUMNS.to_string(),
            &decode::NARROW12_BLOCKS_AN_SM.to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let input: String = cases
        .iter()
        .map(|&(rows, k, n, sms, wg)| format!("{rows} {k} {n} {sms} {}\n", u8::from(wg)))
        .collect();
    python
        .stdin
        .take()
        .expect("python3's stdin")
        .write_all(input.as_bytes())
        .expect("the cases written");
    let out = python.wait_with_output().expect("python3 ends");
    assert!(out.status.success(), "python3: {}", out.status);
    let names = String::from_utf8(out.stdout).expect("UTF-8");
    let names: Vec<&str> = names.lines().collect();
    assert_eq!(names.len(), cases.len(), "one kernel a case");
    for (&(rows, k, n, sms, wg), python) in cases.iter().zip(names) {
        let rust = contract_of(ProjectionKernel::pick(rows, k, n, sms, wg)).name;
        assert_eq!(
            python, rust,
            "{rows} rows, K = {k}, N = {n}, {sms} SMs, warpgroup kernel loads: {wg}"
        );
    }
}

/// A QKV weight for 9 KV heads where the caches hold 8: attention would read its values'
/// heads 128 columns short of where they are, and write the new token's from there.
#[test]
fn a_qkv_output_of_another_width_than_the_heads_make_is_refused() {
    let mut args = attention(8, 8 * P);
    args[arg(ROPE, "qkv")] = f16(&[8, (HQ + 2 * 9) * D]);
    let text = refused(ROPE, &spread(args), &SCALE);
    // (HQ + 2 * HKV) * D, each symbol bound by the first input that has it as a dimension.
    assert!(
        text.contains(
            "argument qkv: shape[1] is 6400, expected (HQ + 2 * HKV) * D = 6144 (HQ = 32 bound by \
             arrivals.shape[1], HKV = 8 bound by k_cache.shape[2], D = 128 bound by cos_sin.shape[1])"
        ),
        "{text}"
    );
}

/// Caches of 4 KV heads beside a QKV output of 8: the new token's K and V would be written
/// past each page's rows.
#[test]
fn caches_of_another_head_count_are_refused() {
    let mut args = attention(8, 8 * P);
    args[arg(ROPE, "k_cache")] = f16(&[8 * P, BS, 4, D]);
    args[arg(ROPE, "v_cache")] = f16(&[8 * P, BS, 4, D]);
    let text = refused(ROPE, &spread(args), &SCALE);
    // HKV is bound by k_cache (4): qkv should then be (32 + 8) * 128 wide.
    assert!(
        text.contains("argument qkv: shape[1] is 6144, expected (HQ + 2 * HKV) * D = 5120"),
        "{text}"
    );
    // A value cache alone of another head count: its own dimension, against k_cache's.
    let mut args = attention(8, 8 * P);
    args[arg(ROPE, "v_cache")] = f16(&[8 * P, BS, 4, D]);
    let text = refused(ROPE, &spread(args), &SCALE);
    assert!(
        text.contains(
            "argument v_cache: shape[2] is 4, expected HKV = 8 (bound by k_cache.shape[2])"
        ),
        "{text}"
    );
}

/// A slot mapping, position list or length list of another batch than the QKV output's.
#[test]
fn per_sequence_tensors_of_another_batch_are_refused() {
    for name in ["positions", "slot_mapping", "seq_lens"] {
        let c = ROPE;
        let mut args = attention(8, 8 * P);
        args[arg(c, name)] = Fake::new(c.args[arg(c, name)].dtype, &[7], 0);
        let text = refused(c, &spread(args), &SCALE);
        assert!(
            text.contains(&format!(
                "argument {name}: shape[0] is 7, expected B = 8 (bound by qkv.shape[0])"
            )),
            "{text}"
        );
    }
}

/// Block tables of 64-bit entries, as some engines keep them: read as 32-bit, every other
/// page id would be the high half of one.
#[test]
fn a_block_table_of_another_integer_type_is_refused() {
    let mut args = attention(8, 8 * P);
    args[arg(ROPE, "block_tables")] = Fake::new(DType::I64, &[8, P], 0);
    let text = refused(ROPE, &spread(args), &SCALE);
    assert!(
        text.contains("argument block_tables: dtype is i64, expected i32"),
        "{text}"
    );
}

/// A workspace sized for tables of 512 tokens under tables of 1024: the partitions past 4
/// would be written past it.
#[test]
fn a_workspace_for_fewer_partitions_than_the_tables_need_is_refused() {
    let mut args = attention(8, 8 * P);
    args[arg(ROPE, "part_o")] = Fake::new(DType::F32, &[8, HQ, 4, D], 0);
    let text = refused(ROPE, &spread(args), &SCALE);
    // ceil(P * BS / PART) = ceil(64 * 16 / 128) = 8.
    assert!(
        text.contains("argument part_o: shape[2] is 4, expected ceil(P * BS / PART) = 8"),
        "{text}"
    );
}

/// The O projection fed a row of another width than its weight's K, and the gate/up
/// projection's output neither as wide as its weight's columns nor half as wide.
#[test]
fn projections_refuse_inputs_and_outputs_their_weights_do_not_match() {
    let (c, mut args) = projection(8, HQ * D, HIDDEN, HIDDEN);
    args[arg(c, "x")] = f16(&[8, 4000]);
    let text = refused(c, &spread(args), &[]);
    // K is bound by x (4000); the weight's logical K is 4096.
    assert!(
        text.contains("argument w: shape[0] is 4096, expected K = 4000 (bound by x.shape[1])"),
        "{text}"
    );

    let (c, mut args) = projection(8, HIDDEN, 2 * INTERMEDIATE, INTERMEDIATE);
    args[arg(c, "y")] = f16(&[8, 10000]);
    let text = refused(c, &spread(args), &[]);
    assert!(
        text.contains("constraint NY == N || 2 * NY == N does not hold: NY = 10000, N = 28672"),
        "{text}"
    );
}

/// Scales and zeros of a checkpoint quantized with groups of 64 under a spec call of 128:
/// the kernel would read a group's scale from another group's row.
#[test]
fn quantized_buffers_of_another_group_size_are_refused() {
    let (c, mut args) = projection(1, HIDDEN, QKV, QKV);
    let [_, _, qzeros, scales] = gptq(HIDDEN, QKV, 64);
    args[arg(c, "w.qzeros")] = qzeros;
    args[arg(c, "w.scales")] = scales;
    let text = refused(c, &spread(args), &[]);
    // ceil(K / G) = ceil(4096 / 128) = 32 rows, where groups of 64 make 64.
    assert!(
        text.contains("argument w.qzeros: shape[0] is 64, expected ceil(K / G) = 32"),
        "{text}"
    );
    assert!(
        text.contains("argument w.scales: shape[0] is 64, expected ceil(K / G) = 32"),
        "{text}"
    );
}

/// paged_attn_rope's symbols for the host validation: `b` sequences, caches of `nb` pages.
fn attention_symbols(b: usize, nb: usize) -> Vec<i64> {
    let c = ROPE;
    c.symbols
        .iter()
        .map(|s| match s.name {
            "B" => b,
            "MAXPOS" => MAXPOS,
            "D" => D,
            "NB" => nb,
            "BS" => BS,
            "HKV" => HKV,
            "P" => P,
            "HQ" => HQ,
            other => panic!("paged_attn_rope has a symbol {other} this test does not know"),
        } as i64)
        .collect()
}

/// validate_values on paged_attn_rope's argument `name` with `entries`.
fn validate(
    name: &str,
    shape: &[usize],
    entries: &[i64],
    nb: usize,
) -> Result<(), Box<IndexValue>> {
    values::validate(
        ROPE,
        name,
        shape,
        entries,
        &attention_symbols(shape[0], nb),
        &SCALE,
    )
}

/// The index tensors' entries: a position past the RoPE table, a slot past the caches, a
/// page past them and a length past the table's capacity are each named with where they
/// are, what they are and the bound that the layer's tensors set; -1 is a padding slot.
#[test]
fn the_index_tensors_bad_entries_are_named() {
    let nb = 2 * P;
    assert!(validate("positions", &[2], &[0, MAXPOS as i64 - 1], nb).is_ok());
    let r = validate("positions", &[2], &[5, MAXPOS as i64], nb).unwrap_err();
    assert_eq!((r.position.as_slice(), r.value), (&[1i64][..], 4096));
    assert_eq!(r.fault, ValueFault::Range { lo: 0, hi: 4096 });
    let text = r.to_string();
    assert!(
        text.contains("positions[1] = 4096, expected < MAXPOS = 4096 (bound by cos_sin.shape[0])"),
        "{text}"
    );

    // Slots 0 .. NB * BS = 2048, or -1.
    assert!(validate("slot_mapping", &[2], &[-1, 2047], nb).is_ok());
    let r = validate("slot_mapping", &[2], &[-1, 2048], nb).unwrap_err();
    assert_eq!((r.position.as_slice(), r.value), (&[1i64][..], 2048));
    let r = validate("slot_mapping", &[2], &[-2, 0], nb).unwrap_err();
    assert_eq!((r.position.as_slice(), r.value), (&[0i64][..], -2));

    // Page ids 0 .. NB = 128.
    let mut table = vec![0i64; 2 * P];
    table[P + 3] = 127;
    assert!(validate("block_tables", &[2, P], &table, nb).is_ok());
    table[P + 3] = 128;
    let r = validate("block_tables", &[2, P], &table, nb).unwrap_err();
    assert_eq!((r.position.as_slice(), r.value), (&[1i64, 3][..], 128));
    let text = r.to_string();
    assert!(
        text.contains("block_tables[1, 3] = 128, expected < NB = 128 (bound by k_cache.shape[0])"),
        "{text}"
    );

    // Lengths 0 .. P * BS + 1 = 1025: a table of 64 pages holds 1024 tokens.
    assert!(validate("seq_lens", &[2], &[0, 1024], nb).is_ok());
    let r = validate("seq_lens", &[2], &[1025, 1], nb).unwrap_err();
    assert_eq!((r.position.as_slice(), r.value), (&[0i64][..], 1025));
}
