//! Every generated kernel, and the bench's CUDA (its helpers, bench/helpers.cu, and the
//! hand-written twins, bench/twins/), compiles with NVRTC for sm_90, with no error and no
//! warning.
//!
//! This needs no GPU, only libnvrtc and the CUDA headers: the test command (`.ci/run`)
//! installs the pip wheels pinned to CUDA 13.0 and points `IMA_CUDA_ROOT` at them. Without
//! them the test fails, naming every place it looked: CI never skips it silently.

use std::path::{Path, PathBuf};

/// The `.cu` files under `dir`, or `dir` itself when it is one.
fn generated_cuda(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            generated_cuda(&path, out);
        } else if path.extension().is_some_and(|x| x == "cu") {
            out.push(path);
        }
    }
}

/// Compiles each file under `dir` (or the file `dir`) with NVRTC for `arch`; fails naming
/// every file that errs or warns.
fn compiles_cleanly(dir: &str, arch: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    generated_cuda(&root.join(dir), &mut files);
    assert!(!files.is_empty(), "no CUDA under {dir}");
    let mut failures = Vec::new();
    for f in &files {
        // A hand-written file that uses ima.cuh's helpers gets it as its users compile it.
        let source = ima_codegen::cuda::splice_ima_cuh(&std::fs::read_to_string(f).unwrap());
        let name = f.file_name().unwrap().to_string_lossy();
        match ima::compile_ptx_checked(&source, &name, arch) {
            // Only sm_90a has every kernel: elsewhere a file of `tma` kernels has none.
            Ok(ptx) => assert!(
                ptx.contains(".entry") || !arch.ends_with('a'),
                "{}: PTX without entry points",
                f.display()
            ),
            Err(e) => failures.push(format!("{}:\n{e}", f.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// sm_90 leaves out the kernels with `tma` arguments, which sm_90a (the runtime's choice on
/// a 9.0 device, `ima::arch_for`) compiles with the rest.
#[test]
fn every_generated_kernel_compiles_for_sm_90_and_sm_90a_without_warnings() {
    compiles_cleanly("tests/out", "sm_90");
    compiles_cleanly("tests/out", "sm_90a");
}

/// The bench compiles these at run time on the GPU machine, for sm_90a there: a mistake
/// would otherwise surface only there. (bench/explore/ holds standalone programs that nvcc
/// builds there, host code included: not the bench's.)
#[test]
fn the_bench_cuda_compiles_for_sm_90a_without_warnings() {
    compiles_cleanly("bench/helpers.cu", "sm_90a");
    compiles_cleanly("bench/twins", "sm_90a");
}

/// A body's errors are reported at the spec's lines, each once: one in the middle at its
/// own line, and a last statement without its `;` at the body's closing brace, whose line
/// the generated function's own brace is said to stand on (it was the generated file's, so
/// the error named a line of `k.cu`). A body whose last line is a preprocessor directive,
/// or is continued into one, compiles: the brace stays on a line of its own.
#[test]
fn a_body_s_errors_are_reported_at_the_spec_s_lines() {
    // `body` runs from after `body {` to the spec's closing brace.
    let compile = |body: &str| {
        let spec = format!(
            "kernel k {{\n    in  x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body {{\n{body}}}\n}}\n"
        );
        let m = ima_dsl::compile(&ima_dsl::Source::new("specs/k.ima", spec))
            .unwrap_or_else(|d| panic!("{d:?}"));
        let cuda = ima_codegen::cuda::generate(&m, "k.cu");
        ima::compile_ptx_checked(&cuda, "k.cu", "sm_90").map_err(|e| e.to_string())
    };
    let missing_semicolon = compile("        const float v = x(i) * 2.f;\n        y(i) = v\n    ")
        .expect_err("a statement without its `;`");
    assert!(
        missing_semicolon.contains("specs/k.ima(8): error: expected a \";\""),
        "{missing_semicolon}"
    );
    assert!(!missing_semicolon.contains("k.cu("), "{missing_semicolon}");
    let undeclared = compile("        y(i) = z(i);\n        y(i) += 1.f;\n    ")
        .expect_err("an undeclared name");
    assert!(
        undeclared.contains("specs/k.ima(6): error: identifier \"z\" is undefined"),
        "{undeclared}"
    );
    // Each of the four entry points instantiates the body and NVRTC says it four times;
    // the runtime's error says it once.
    assert_eq!(
        undeclared.matches("\"z\" is undefined").count(),
        1,
        "{undeclared}"
    );
    assert!(
        undeclared.ends_with(
            "(3 message(s) left out that said the same again: each of a kernel's entry points \
             instantiates its body)"
        ),
        "{undeclared}"
    );
    compile("#define TWICE 2\n        y(i) = TWICE * x(i);\n#undef TWICE ")
        .expect("a body whose brace ends a directive's line");
    compile("        y(i) = x(i);\n#define ONE \\\n        1 ")
        .expect("a body whose brace ends a directive's continued line");
}

/// The `#line`s name a spec path with a `\` or a line break, escaped as a C string holds
/// them: NVRTC names the first as written in its messages, and the second compiles (a `"`
/// it would write into the PTX unescaped: `check_line_path` refuses it).
#[test]
fn a_spec_path_with_a_backslash_or_a_line_break_is_named_in_the_line_directives() {
    let compile = |path: &str, statement: &str| {
        let spec = format!(
            "kernel k {{\n    in  x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body {{\n        {statement}\n    }}\n}}\n"
        );
        let m =
            ima_dsl::compile(&ima_dsl::Source::new(path, spec)).unwrap_or_else(|d| panic!("{d:?}"));
        ima_codegen::cuda::check_line_path(path).expect("a path NVRTC can name");
        let cu_file = ima_codegen::cu_file(path);
        let cuda = ima_codegen::cuda::generate(&m, &cu_file);
        ima::compile_ptx_checked(&cuda, &cu_file, "sm_90").map_err(|e| e.to_string())
    };
    let undeclared = compile("back\\slash/k.ima", "y(i) = z(i);").expect_err("an undeclared name");
    assert!(
        undeclared.contains("back\\slash/k.ima(6): error: identifier \"z\" is undefined"),
        "{undeclared}"
    );
    compile("line\nbreak/k.ima", "y(i) = x(i);").expect("a path with a line break");
    assert!(ima_codegen::cuda::check_line_path("we\"ird/k.ima").is_err());
}

/// A shared array's 16-byte vector read (`s.at8(i)` of f16, here through `ima_row_pairs`,
/// as a body feeding mma.sync from shared memory reads it) is one vector load: the accessor
/// says its address is 16-byte aligned. From the element pointer alone, the compiler loaded
/// an f16 vector 2 bytes at a time (eight `ld.shared.u16` where one `ld.shared.v4` does).
#[test]
fn a_shared_f16_vector_is_read_with_one_16_byte_load() {
    let spec = "kernel t where K % 8 == 0, K <= 1024 {
    in  x: f16[K] align(16)
    out y: f32[K]
    shared s: f16[K]
    launch grid(1) block(128)
    body {
        for (I i = threadIdx.x * 8; i < K; i += 1024) s.at8(i) = x.load8(i);
        __syncthreads();
        for (I i = threadIdx.x * 8; i < K; i += 1024) {
            const ImaFrag4 f = ima_row_pairs(s.at8((i + 8) % K));
            y(i) = __uint_as_float(f.x[0] ^ f.x[3]);
        }
    }
}
";
    let m = ima_dsl::compile(&ima_dsl::Source::new("vector_read.ima", spec.to_string()))
        .unwrap_or_else(|d| panic!("{d:?}"));
    let cuda = ima_codegen::cuda::generate(&m, "vector_read.cu");
    let ptx = ima::compile_ptx_checked(&cuda, "vector_read.cu", "sm_90a").unwrap();
    // The release entry point with 32-bit indices: its shared loads.
    let start = ptx.find(".entry t_i32(").expect("t_i32 in the PTX");
    let end = ptx[start + 1..]
        .find(".entry ")
        .map_or(ptx.len(), |e| start + 1 + e);
    let loads: Vec<&str> = ptx[start..end]
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("ld.shared"))
        .collect();
    assert!(
        !loads.is_empty() && loads.iter().all(|l| l.starts_with("ld.shared.v4")),
        "t_i32's shared loads: {loads:?}"
    );
}

/// In a kernel that starts early (docs/programmatic-launch.md), no input that is not
/// `early` is loaded by `ld.global.nc`: ptxas moves such loads across
/// `griddepcontrol.wait`, and did, above it (bench/explore/pdlpre's README), where they
/// would read what the grid ahead has not written. The PTX of every entry point of
/// paged_attn_rope, gptq_gemm_wg32 and tests/in/early.ima's kernels is read for its loads,
/// each traced back (through the registers its address is computed from) to the entry
/// point's parameters; the contract says which are pointers of inputs that are not early.
#[test]
fn no_input_that_is_not_early_is_loaded_noncoherently_in_a_kernel_that_starts_early() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seen = Vec::new();
    for (spec, kernels) in [
        ("specs/paged.ima", &["paged_attn_rope"][..]),
        ("specs/gemm_tma.ima", &["gptq_gemm_wg32"][..]),
        (
            "tests/in/early.ima",
            &["halve_and_add", "reads_too_soon"][..],
        ),
    ] {
        let text = std::fs::read_to_string(root.join(spec)).unwrap();
        let m =
            ima_dsl::compile(&ima_dsl::Source::new(spec, text)).unwrap_or_else(|d| panic!("{d:?}"));
        let cuda = ima_codegen::cuda::generate(&m, "early.cu");
        let ptx = ima::compile_ptx_checked(&cuda, "early.cu", "sm_90a").unwrap();
        for name in kernels {
            let k = m.kernels.iter().find(|k| k.name == *name).unwrap();
            assert!(k.starts_early(), "{name}");
            let contract = ima_dsl::abi::kernel_contract(&m, k);
            for (suffix, checked) in [
                ("i32", false),
                ("i64", false),
                ("i32_checked", true),
                ("i64_checked", true),
            ] {
                let entry = format!("{name}_{suffix}");
                // Parameter index -> the contract argument whose data pointer it is.
                let pointers: Vec<Option<usize>> = contract
                    .entry_params(checked)
                    .map(|p| match p {
                        ima::contract::EntryParam::Pointer { arg } => Some(arg),
                        _ => None,
                    })
                    .collect();
                let late = |arg: usize| {
                    let a = &contract.args[arg];
                    !a.early && a.role == ima::Role::In
                };
                for (load, args) in global_loads(&ptx, &entry) {
                    let nc = load.starts_with("ld.global.nc");
                    for &p in &args {
                        if let Some(Some(arg)) = pointers.get(p) {
                            seen.push((entry.clone(), contract.args[*arg].name.clone(), nc));
                            assert!(
                                !(nc && late(*arg)),
                                "{entry}: `{load}` loads {} (not early) by ld.global.nc",
                                contract.args[*arg].name
                            );
                        }
                    }
                }
            }
        }
    }
    // The tracing sees the loads it judges: an input read after the wait, plainly, and an
    // early one read by ld.global.nc.
    assert!(
        seen.contains(&("halve_and_add_i32".into(), "x".into(), false)),
        "{seen:?}"
    );
    assert!(
        seen.contains(&("halve_and_add_i32".into(), "table".into(), true)),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|(e, a, nc)| e == "paged_attn_rope_i32" && a == "qkv" && !nc),
        "{seen:?}"
    );
}

/// The `ld.global` instructions of `entry`'s PTX, each with the indices of the entry
/// point's parameters its address derives from: every register an instruction writes takes
/// the parameters of the registers it reads (flow-insensitively, to a fixed point), from
/// `ld.param` of `[ENTRY_param_N]`.
fn global_loads(ptx: &str, entry: &str) -> Vec<(String, Vec<usize>)> {
    use std::collections::{BTreeSet, HashMap};
    let start = ptx
        .find(&format!(".entry {entry}("))
        .unwrap_or_else(|| panic!("{entry} in the PTX"));
    // To the function's closing brace: the functions after it name their own registers.
    let end = ptx[start..].find("\n}\n").map_or(ptx.len(), |e| start + e);
    let body: Vec<&str> = ptx[start..end]
        .lines()
        .map(str::trim)
        .filter(|l| l.ends_with(';') && !l.starts_with("//") && !l.starts_with('.'))
        .collect();
    let registers = |s: &str| -> Vec<String> {
        s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '%' || c == '_'))
            .filter(|w| w.starts_with('%'))
            .map(str::to_string)
            .collect()
    };
    let param = format!("{entry}_param_");
    let mut taint: HashMap<String, BTreeSet<usize>> = HashMap::new();
    loop {
        let mut changed = false;
        for line in &body {
            let Some((op, operands)) = unguarded(line).split_once(char::is_whitespace) else {
                continue;
            };
            // Stores and branches write no register.
            if op.starts_with("st.") || op.starts_with("bra") {
                continue;
            }
            let (dst, srcs) = match operands.find('}') {
                Some(close) if operands.trim_start().starts_with('{') => {
                    operands.split_at(close + 1)
                }
                _ => operands.split_once(',').unwrap_or((operands, "")),
            };
            let mut from: BTreeSet<usize> = BTreeSet::new();
            if op.starts_with("ld.param")
                && let Some(at) = srcs.find(&param)
            {
                let digits: String = srcs[at + param.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                from.insert(digits.parse().unwrap());
            }
            for r in registers(srcs) {
                from.extend(taint.get(&r).into_iter().flatten());
            }
            for r in registers(dst) {
                let t = taint.entry(r).or_default();
                let before = t.len();
                t.extend(&from);
                changed |= t.len() != before;
            }
        }
        if !changed {
            break;
        }
    }
    body.iter()
        .map(|l| unguarded(l))
        .filter(|l| l.starts_with("ld.global"))
        .map(|l| {
            let address = l
                .split_once('[')
                .and_then(|(_, r)| r.split_once(']'))
                .map_or("", |a| a.0);
            let args = registers(address)
                .iter()
                .flat_map(|r| taint.get(r).into_iter().flatten().copied())
                .collect::<BTreeSet<usize>>();
            (l.to_string(), args.into_iter().collect())
        })
        .collect()
}

/// A PTX instruction without its `;` and its predicate guard (`@%p1 `, `@!%p1 `).
fn unguarded(line: &str) -> &str {
    let line = line.trim_end_matches(';');
    match line.strip_prefix('@') {
        Some(rest) => rest
            .split_once(char::is_whitespace)
            .map_or(rest, |(_, i)| i.trim_start()),
        None => line,
    }
}
