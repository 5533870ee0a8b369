//! `imac waits`: the round trips a spec's kernels wait for, read off NVRTC's SASS (through
//! nvdisasm, which scripts/cuda-env installs beside NVRTC), by spec line. Each expectation
//! is read from the spec: the line whose accessor loads, the line that uses the value, and
//! what the generated accessor says there. Needs NVRTC, as `tests/nvrtc.rs` does.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn spec(name: &str) -> String {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../specs")
        .join(name);
    path.display().to_string()
}

fn imac(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_imac"))
        .args(args)
        .output()
        .expect("running imac")
}

fn waits(args: &[&str]) -> String {
    let out = imac(&[&["waits"], args].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The lines of the report from the one that starts with `header` (after its indentation)
/// to the next at the same or a lower indentation.
fn section<'a>(report: &'a str, header: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = report.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with(header))
        .unwrap_or_else(|| panic!("no `{header}` in:\n{report}"));
    let indent = |l: &str| l.len() - l.trim_start().len();
    let depth = indent(lines[at]);
    let end = lines[at + 1..]
        .iter()
        .position(|l| indent(l) <= depth)
        .map_or(lines.len(), |n| at + 1 + n);
    lines[at..end].to_vec()
}

#[test]
fn a_row_of_add_rms_norm_waits_once_for_all_its_kept_vectors() {
    // specs/decode.ima issues every kept vector's loads (the line of `kept`'s loads and the
    // two beside it) before the first is added: one round trip a row, for the loads of
    // that line's loop.
    let spec = spec("decode.ima");
    let kept = "kept[i] = residual.load8(row, d);";
    let line = std::fs::read_to_string(&spec)
        .expect("specs/decode.ima reads")
        .lines()
        .position(|l| l.trim() == kept)
        .expect("add_rms_norm's body loads its kept vectors")
        + 1;
    let report = waits(&[&spec, "--kernel", "add_rms_norm"]);
    assert!(
        report.starts_with("add_rms_norm_i32 (sm_90a): "),
        "{report}"
    );
    let kept_loads = format!("in {spec}:{line} `{kept}`");
    let pass = report
        .lines()
        .filter(|l| l.trim_start().starts_with("loop at"))
        .map(|header| section(&report, header.trim_start()).join("\n"))
        .find(|pass| pass.contains(&kept_loads))
        .unwrap_or_else(|| panic!("no loop waits for line {line}'s loads:\n{report}"));
    assert!(
        pass.lines()
            .next()
            .unwrap()
            .ends_with(": 1 round trip(s) a pass"),
        "{pass}"
    );
    assert!(pass.contains("\n    1: "), "{pass}");
    assert!(
        !pass.contains("\n    2"),
        "a second wait in the row's pass:\n{pass}"
    );
}

#[test]
fn an_index_value_checked_before_the_next_load_is_named_by_its_spec_line() {
    // specs/index.ima:87 reads topk_ids, whose contract allows -1: the generated accessor
    // loads the entry (`const int v = p[...]`) and compares it with the sentinel, and the
    // loop waits there for that load.
    let spec = spec("index.ima");
    let report = waits(&[&spec, "--kernel", "moe_route"]);
    let header = format!("loop at {spec}:87 (");
    let pass = report
        .lines()
        .filter(|l| l.trim_start().starts_with(&header))
        .map(|h| section(&report, h.trim_start()).join("\n"))
        .find(|pass| pass.contains("static_cast<int>(-1)"))
        .unwrap_or_else(|| panic!("no loop at line 87 waits at the sentinel check:\n{report}"));
    assert!(
        pass.contains("index.cu:") && pass.contains("`if (v == static_cast<int>(-1)) return {};`"),
        "{pass}"
    );
    assert!(
        pass.contains(&format!(
            "in {spec}:87 `topk_ids(i / K, i % K).then([&](I x) {{ atomicAdd(&fill(x), 1); }});`"
        )),
        "{pass}"
    );
    assert!(pass.contains("waits for the load at index.cu:"), "{pass}");
    assert!(pass.contains("`const int v = p[i0 * s0 + i1];`"), "{pass}");
}

#[test]
fn a_loop_over_an_index_tensor_waits_once_a_pass_whatever_its_unrolling() {
    // ptxas unrolls moe_route's loops over topk_ids (index.ima:87 and 108). A bad entry is
    // kept under the failed check's predicate, with no call, so each unrolled entry's load
    // issues before the previous entry's check: one round trip a pass, not one an entry.
    let spec = spec("index.ima");
    let report = waits(&[&spec, "--kernel", "moe_route"]);
    let mut loops = 0;
    for line in [87, 108] {
        let header = format!("loop at {spec}:{line} (");
        for h in report
            .lines()
            .filter(|l| l.trim_start().starts_with(&header))
        {
            assert!(h.ends_with(": 1 round trip(s) a pass"), "{h}:\n{report}");
            loops += 1;
        }
    }
    assert!(loops >= 2, "no loops at lines 87 and 108:\n{report}");
}

#[test]
fn what_runs_only_after_a_violation_is_left_out() {
    // paged_attn_rope's release entry point reports a bad position, slot or page id once
    // its body returns (ima.cuh's ima_flush: an atomic claim, then the record and its flag).
    let report = waits(&[&spec("paged.ima"), "--kernel", "paged_attn_rope"]);
    assert!(report.contains("waits for the load at"), "{report}");
    for on_violation in ["atomicCAS(&r->claimed", "r->flag", "atomicAdd(&r->count"] {
        assert!(!report.contains(on_violation), "{on_violation}:\n{report}");
    }
}

#[test]
fn each_entry_point_can_be_read() {
    let spec = spec("decode.ima");
    for (entry, name) in [
        ("i32", "rope_cache_i32 "),
        ("i64", "rope_cache_i64 "),
        ("i32-checked", "rope_cache_i32_checked "),
        ("i64-checked", "rope_cache_i64_checked "),
    ] {
        let report = waits(&[&spec, "--kernel", "rope_cache", "--entry", entry]);
        assert!(report.starts_with(&format!("{name}(sm_90a): ")), "{report}");
    }
}

#[test]
fn a_kernel_not_in_the_spec_is_an_error_that_names_those_that_are() {
    let decode = spec("decode.ima");
    let out = imac(&["waits", &decode, "--kernel", "add_rms"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: {decode} has no kernel `add_rms`; its kernels: add_rms_norm, rope_cache, gptq_gemv_narrow, gptq_gemv_narrow12"
        )
    );
}

#[test]
fn a_virtual_architecture_has_no_sass_to_read() {
    let out = imac(&["waits", &spec("decode.ima"), "--arch", "compute_90"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim_end(),
        "error: --arch compute_90: not a real GPU architecture, which has no SASS to read; \
         name one such as sm_90a"
    );
}

#[test]
fn the_example_in_docs_commands_md_is_what_the_command_prints() {
    // The doc shows the first lines of a real report; its addresses and index.cu lines move
    // whenever ima.cuh or ptxas changes, so they are held here rather than trusted.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let doc = std::fs::read_to_string(root.join("docs/commands.md")).unwrap();
    let call = "`imac waits specs/index.ima --kernel moe_route --entry i64` begins:";
    let after = &doc[doc.find(call).expect("the example's sentence") + call.len()..];
    let block = after
        .split("```\n")
        .nth(1)
        .expect("a fenced block after the sentence");
    let out = Command::new(env!("CARGO_BIN_EXE_imac"))
        .current_dir(&root)
        .args([
            "waits",
            "specs/index.ima",
            "--kernel",
            "moe_route",
            "--entry",
            "i64",
        ])
        .output()
        .expect("running imac");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(
        report.starts_with(block),
        "docs/commands.md's example is not how the report begins; the report is:\n{report}"
    );
}
