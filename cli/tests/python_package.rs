//! `imac compile --python` for every example spec: the package's files are there, the
//! Cargo.toml asks pyo3 for abi3, every kernel has its function (a quantized argument's
//! parts flattened into its custom ops) and a `validate` where it has value contracts,
//! and every Python file parses (with the `python3` on PATH, which the test needs).
//! Building the wheel takes minutes (pyo3 and the runtime in release): scripts/python-wheels
//! does it and runs tests/python/test_cpu.py on it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ sits in the workspace")
        .to_path_buf()
}

fn specs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(workspace().join("specs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ima"))
        .collect();
    v.push(workspace().join("tests/in/planted_bugs.ima"));
    v.sort();
    v
}

#[test]
fn every_spec_makes_a_python_package() {
    // The generated .py files are parsed by python3: without it the test fails rather than
    // skip that half of its checks.
    let python = Command::new("python3").arg("--version").output();
    assert!(
        python.is_ok_and(|o| o.status.success()),
        "python3 not found: it parses the generated packages' .py files"
    );
    for spec in specs() {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_imac"))
            .arg("compile")
            .arg(&spec)
            .arg("--python")
            .arg("-o")
            .arg(dir.path())
            .current_dir(workspace())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            spec.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let stem = spec.file_stem().unwrap().to_str().unwrap();
        let pkg = dir.path().join(format!("python/{stem}_kernels"));
        let cargo = std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
        assert!(cargo.contains("abi3-py39"), "{cargo}");
        assert!(
            cargo.contains("crate-type = [\"cdylib\", \"rlib\"]"),
            "{cargo}"
        );
        let pyproject = std::fs::read_to_string(dir.path().join("pyproject.toml")).unwrap();
        assert!(pyproject.contains(&format!("module-name = \"{stem}_kernels._native\"")));
        let lib = std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap();
        assert!(lib.contains("mod python;"));
        let init = std::fs::read_to_string(pkg.join("__init__.py")).unwrap();
        let source = std::fs::read_to_string(&spec).unwrap();
        let ir = ima_dsl::compile(&ima_dsl::diag::Source::new("spec", source))
            .unwrap_or_else(|_| panic!("{}", spec.display()));
        for k in &ir.kernels {
            assert!(
                init.contains(&format!("\ndef {}(", k.name)),
                "{}: {}",
                spec.display(),
                k.name
            );
            // A quantized argument is one QuantWeight in the function, its parts in the
            // custom ops.
            for a in k.args.iter().filter(|a| a.quant.is_some()) {
                assert!(
                    init.contains(&format!("{0}_qweight: _torch.Tensor", a.name)),
                    "{}: {}",
                    spec.display(),
                    k.name
                );
            }
            assert_eq!(
                init.contains(&format!("\n{0}.validate = _{0}_validate\n", k.name)),
                ima_dsl::abi::has_value_contracts(k),
                "{}: {}",
                spec.display(),
                k.name
            );
        }
        for f in ["__init__.py", "__init__.pyi", "_imac.py"] {
            assert_parses(&pkg.join(f));
        }
    }
}

#[test]
fn a_kernel_that_writes_no_tensor_makes_a_custom_op_that_mutates_nothing() {
    // An L2 prefetch's shape: every argument read, none written. Its custom op's
    // `mutates_args` was `(,)`, a syntax error at the package's import (session 59).
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("reads.ima");
    std::fs::write(
        &spec,
        "kernel touch_l2 {\n    in w: i32[N]\n    launch grid(ceil(N / 256)) block(256)\n    body {\n        \
         const I i = I(blockIdx.x) * 256 + threadIdx.x;\n        \
         if (i < N) asm volatile(\"prefetch.global.L2 [%0];\" ::\"l\"(&w.p[i]));\n    }\n}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_imac"))
        .arg("compile")
        .arg(&spec)
        .arg("--python")
        .arg("-o")
        .arg(dir.path().join("pkg"))
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let init = dir.path().join("pkg/python/reads_kernels/__init__.py");
    let text = std::fs::read_to_string(&init).unwrap();
    assert!(
        text.contains("custom_op(\"imac_reads_kernels::touch_l2_out\", mutates_args=())"),
        "{text}"
    );
    assert_parses(&init);
}

/// The file parses as Python (by the `python3` on PATH).
fn assert_parses(path: &Path) {
    let parsed = Command::new("python3")
        .args(["-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        parsed.status.success(),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&parsed.stderr)
    );
}
