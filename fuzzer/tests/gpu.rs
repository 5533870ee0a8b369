//! `imac fuzz` on a GPU: every example spec fuzzes clean (positive and negative), and
//! every planted bug is found, with the seed that replays it.

use ima_dsl::ir;
use ima_fuzz::{Finding, Kind, Options, fuzz};

const SEED: u64 = 0x1ca_f00d;

fn load(file: &str) -> (ir::Module, String) {
    let text = std::fs::read_to_string(format!("{}/../{file}", env!("CARGO_MANIFEST_DIR")))
        .expect("the spec");
    let m = ima_fuzz::contract::load(file, &text).expect("the spec compiles");
    let cu_file = ima_codegen::cu_file(file);
    let cuda = ima_codegen::cuda::generate(&m, &cu_file);
    (m, cuda)
}

fn example_specs() -> Vec<String> {
    let mut files: Vec<String> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../specs"))
            .expect("specs/")
            .map(|e| format!("specs/{}", e.unwrap().file_name().to_string_lossy()))
            .filter(|n| n.ends_with(".ima"))
            .collect();
    files.sort();
    files
}

fn run(file: &str, opts: &Options) -> ima_fuzz::Report {
    let (m, cuda) = load(file);
    let mut print = |f: &Finding| eprintln!("{f}");
    let report = fuzz(&m, &cuda, opts, SEED, &mut print).expect("the fuzzer starts");
    for n in &report.notes {
        eprintln!("note: {n}");
    }
    report
}

/// 500 cases of each kernel of `file` find nothing.
fn fuzzes_clean_with_500_cases_per_kernel(file: &str) {
    let opts = Options {
        cases: 500,
        ..Options::default()
    };
    let (m, _) = load(file);
    let report = run(file, &opts);
    assert!(
        report.findings.is_empty(),
        "{file}: {} finding(s), seed {SEED}",
        report.findings.len()
    );
    assert_eq!(
        report.cases,
        500 * m.kernels.len(),
        "{file}: {:?}",
        report.notes
    );
}

/// A test for each example spec, `every_example_spec_fuzzes_clean::NAME` for
/// `specs/NAME.ima`: a filter runs some (compute-sanitizer takes longer over them all than
/// one device call may run), and a failure names its spec.
macro_rules! every_example_spec_fuzzes_clean {
    ($($spec:ident),* $(,)?) => {
        mod every_example_spec_fuzzes_clean {
            $(
                #[test]
                #[ignore = "needs a CUDA GPU"]
                fn $spec() {
                    super::fuzzes_clean_with_500_cases_per_kernel(
                        concat!("specs/", stringify!($spec), ".ima"),
                    );
                }
            )*
        }

        const FUZZED_SPECS: &[&str] = &[$(concat!("specs/", stringify!($spec), ".ima")),*];
    };
}

every_example_spec_fuzzes_clean!(
    attn, checkpoint, decode, gemm, gemm_tma, index, paged, quant, rmsnorm, rope, strided,
    transpose,
);

/// Every spec of specs/ has its test above (no GPU needed).
#[test]
fn every_example_spec_has_a_fuzz_test() {
    assert_eq!(FUZZED_SPECS, example_specs());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_mutated_case_is_refused() {
    let opts = Options {
        cases: 300,
        negative: true,
        ..Options::default()
    };
    for file in example_specs() {
        let report = run(&file, &opts);
        assert!(
            report.findings.is_empty(),
            "{file}: {} mutated case(s) not refused as expected, seed {SEED}",
            report.findings.len()
        );
        // Cases with nothing to mutate pass without asserting anything: most must not.
        assert!(
            report.unasserted * 2 < report.cases,
            "{file}: {} of {} case(s) had nothing to mutate, seed {SEED}",
            report.unasserted,
            report.cases
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn planted_bugs_are_found_with_their_seed() {
    let file = "tests/in/planted_bugs.ima";
    for kernel in [
        "transpose_swapped",
        "scores_off_by_one",
        "shared_overrun",
        "dequant_wrong_group",
    ] {
        let opts = Options {
            kernel: Some(kernel.into()),
            cases: 40,
            ..Options::default()
        };
        let report = run(file, &opts);
        let first = report
            .findings
            .first()
            .unwrap_or_else(|| panic!("{kernel}: the planted bug was not found"));
        assert_eq!(first.kind, Kind::OutOfBounds, "{first}");
        assert_eq!(first.kernel, kernel);
        assert_eq!(first.seed, SEED);
        assert!(
            first.replay.contains(&format!("--seed {SEED}"))
                && first.replay.contains(&format!("--kernel {kernel}")),
            "{}",
            first.replay
        );
        // The same seed finds the same cases again (the message names the first thread
        // to fault, which may differ between runs).
        let again = run(file, &opts);
        let key = |f: &Finding| (f.case, f.kind.clone(), f.values.clone(), f.tensors.clone());
        assert_eq!(
            report.findings.iter().map(key).collect::<Vec<_>>(),
            again.findings.iter().map(key).collect::<Vec<_>>(),
            "{kernel}: seed {SEED} does not replay"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_case_past_2_pow_31_elements_runs_when_the_budget_allows() {
    let opts = Options {
        kernel: Some("transpose".into()),
        cases: 1,
        max_bytes: 24 << 30,
        ..Options::default()
    };
    // Edge cases come first, so one case is the first edge; ask for all of them instead.
    let (m, cuda) = load("specs/transpose.ima");
    let c = ima_fuzz::contract::build_all(&m)[0];
    let cfg =
        ima_fuzz::shapes::Config::new(opts.max_bytes, ima_fuzz::shapes::Config::typical_limits());
    let all = ima_fuzz::shapes::edges(c, &cfg, SEED).cases.len();
    let opts = Options {
        cases: all + 4,
        ..opts
    };
    let mut print = |f: &Finding| eprintln!("{f}");
    let report = fuzz(&m, &cuda, &opts, SEED, &mut print).expect("the fuzzer starts");
    assert!(report.findings.is_empty());
    // Every edge case ran (the device's limits may make more edges than the typical ones
    // counted above: then the plan is cut and says so), the one past 2^31 among them.
    assert_eq!(report.cases, all + 4, "{:?}", report.notes);
    assert!(
        !report
            .notes
            .iter()
            .any(|n| n.contains("past 2^31") || n.contains("edge cases; pass --cases")),
        "{:?}",
        report.notes
    );
}
