//! The generated crate: `Cargo.toml`, `README.md` (also the crate's rustdoc), `imac.stamp`,
//! and under `src/`: `lib.rs`, `stubs.rs` (the module body the `#[ima_kernel]` macro
//! expands to), `runtime.rs` (module loading that prefers what was compiled ahead),
//! `NAME.cu`, and for each architecture compiled `ptx/ARCH.ptx` and `cubin/ARCH.cubin`.

use crate::rust::{CudaSource, RustOptions};
use crate::stamp::{self, Stamp};
use askama::Template;
use ima_dsl::abi::kernel_contract;
use ima_dsl::ir;
use std::path::Path;

pub use crate::runtime_dep::RuntimeDep;

/// How to generate a crate: what its stamp records besides the spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrateOptions {
    pub runtime: RuntimeDep,
    /// Architectures whose PTX and SASS the crate carries (see [`image_files`]).
    pub archs: Vec<String>,
    /// The crate is a Python package too (`imac compile --python`,
    /// [`crate::python::package_files`]).
    pub python: bool,
}

/// What the crate carries for one architecture (`imac compile --arch`): the PTX, and the
/// SASS NVRTC assembled from it, which a device of that architecture loads without
/// compiling (`ima_runtime::compile_cuda`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchImage {
    /// `sm_90`.
    pub arch: String,
    pub ptx: String,
    pub cubin: Vec<u8>,
}

/// One generated file, relative to the crate's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    pub path: String,
    pub contents: Vec<u8>,
}

impl GeneratedFile {
    pub fn text(path: impl Into<String>, contents: String) -> GeneratedFile {
        GeneratedFile {
            path: path.into(),
            contents: contents.into_bytes(),
        }
    }
}

#[derive(Template)]
#[template(path = "crate/Cargo.toml", escape = "none")]
struct CargoToml<'a> {
    version: &'static str,
    spec: &'a str,
    name: &'a str,
    runtime: String,
}

#[derive(Template)]
#[template(path = "crate/lib.rs", escape = "none")]
struct LibRs<'a> {
    version: &'static str,
    spec_hash: &'a str,
}

#[derive(Template)]
#[template(path = "crate/runtime.rs", escape = "none")]
struct RuntimeRs<'a> {
    archs: &'a [String],
    /// A kernel reads a `tma` argument or runs in clusters: on a 9.0 device only sm_90a PTX
    /// has it.
    needs_sm90a: bool,
}

/// The crate's package name: `specs/attn.ima` → `attn-kernels`.
pub fn crate_name(m: &ir::Module) -> String {
    format!("{}-kernels", crate::stem(&m.file).replace('_', "-"))
}

/// Every file `imac compile` writes for `m`, checked from `spec_text`, but the
/// architectures' images ([`image_files`]): the crate's, made a Python package too where
/// `options.python`.
pub fn source_files(m: &ir::Module, spec_text: &str, options: &CrateOptions) -> Vec<GeneratedFile> {
    let files = crate_files(m, spec_text, options);
    match options.python {
        true => crate::python::package_files(m, files, options),
        false => files,
    }
}

/// Every file of the crate generated from `m`, checked from `spec_text`, except the
/// architectures' images ([`image_files`]) and the Python package's.
pub fn crate_files(m: &ir::Module, spec_text: &str, options: &CrateOptions) -> Vec<GeneratedFile> {
    let name = crate_name(m);
    let cu_file = crate::cu_file(&m.file);
    let stamp = Stamp {
        imac: crate::VERSION.into(),
        spec: m.file.clone(),
        spec_hash: stamp::hash(spec_text),
        runtime: options.runtime.clone(),
        archs: options.archs.clone(),
        python: options.python,
    };
    // Askama drops a template's final newline; files end with one.
    let render = |t: &dyn askama::DynTemplate| {
        t.dyn_render()
            .expect("the crate templates render from plain strings")
            + "\n"
    };
    let stubs = crate::rust::generate(
        m,
        RustOptions {
            cuda: CudaSource::File(&cu_file),
            runtime: "crate::runtime",
        },
    );
    let file = GeneratedFile::text;
    vec![
        file(
            "Cargo.toml",
            render(&CargoToml {
                version: crate::VERSION,
                spec: &m.file,
                name: &name,
                runtime: options.runtime.toml(),
            }),
        ),
        file(
            "README.md",
            crate::readme::generate(m, &name, &options.archs),
        ),
        file(stamp::FILE, stamp.render()),
        file(
            "src/lib.rs",
            render(&LibRs {
                version: crate::VERSION,
                spec_hash: &stamp.spec_hash,
            }),
        ),
        file("src/stubs.rs", stubs),
        file(
            "src/runtime.rs",
            render(&RuntimeRs {
                archs: &options.archs,
                needs_sm90a: m
                    .kernels
                    .iter()
                    .any(|k| kernel_contract(m, k).needs_sm90a()),
            }),
        ),
        file(
            &format!("src/{cu_file}"),
            crate::cuda::generate(m, &cu_file),
        ),
    ]
}

/// The paths of an architecture's PTX and SASS inside the crate.
pub fn image_paths(arch: &str) -> [String; 2] {
    [
        format!("src/ptx/{arch}.ptx"),
        format!("src/cubin/{arch}.cubin"),
    ]
}

/// The PTX and SASS files, two per architecture.
pub fn image_files(images: &[ArchImage]) -> Vec<GeneratedFile> {
    images
        .iter()
        .flat_map(|i| {
            let [ptx, cubin] = image_paths(&i.arch);
            [
                GeneratedFile::text(ptx, i.ptx.clone()),
                GeneratedFile {
                    path: cubin,
                    contents: i.cubin.clone(),
                },
            ]
        })
        .collect()
}

/// Writes the crate under `dir`, leaving files that already hold their contents untouched:
/// their modification times stay, so cargo does not rebuild a vendored crate that a
/// recompile left as it was. `dir` is new, empty, or a crate imac wrote (it holds an
/// `imac.stamp`), whose files that this generation does not write are removed (a
/// recompile without `--python` or an `--arch` leaves none of theirs behind); a
/// directory that holds other files is refused, since the crate would replace its
/// `Cargo.toml`, `README.md` and `src/lib.rs`.
pub fn write_crate(dir: &Path, files: &[GeneratedFile]) -> std::io::Result<()> {
    let holds_files = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some());
    if holds_files && !dir.join(stamp::FILE).is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "it holds files and no {}: imac writes a crate into a new or empty directory, \
                 or one it generated, since the crate replaces Cargo.toml, README.md and \
                 src/lib.rs",
                stamp::FILE
            ),
        ));
    }
    for stale in generated_before(dir)? {
        let relative = stale.strip_prefix(dir).unwrap_or(&stale);
        if !files.iter().any(|f| Path::new(&f.path) == relative) {
            std::fs::remove_file(&stale)?;
        }
    }
    for f in files {
        let path = dir.join(&f.path);
        if std::fs::read(&path).is_ok_and(|old| old == f.contents) {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, &f.contents)?;
    }
    Ok(())
}

/// The files in `dir` that a generation of its crate may have written and another not:
/// the Python package's (`pyproject.toml`, `src/python.rs`, `python/*_kernels/`'s), the
/// images (`src/ptx/`, `src/cubin/`) and the CUDA file (`src/*.cu`, named for the spec).
/// What imac never writes (Cargo.lock, a build's output, a hand-added file) is not.
fn generated_before(dir: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let files_in = |sub: &Path, keep: &dyn Fn(&str) -> bool| -> std::io::Result<Vec<_>> {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
            return Ok(Vec::new());
        };
        let mut found = Vec::new();
        for e in entries {
            let path = e?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_file() && keep(name) {
                found.push(path);
            }
        }
        Ok(found)
    };
    let mut found = Vec::new();
    found.extend(files_in(Path::new(""), &|n| n == "pyproject.toml")?);
    found.extend(files_in(Path::new("src"), &|n| {
        n == "python.rs" || n.ends_with(".cu")
    })?);
    found.extend(files_in(Path::new("src/ptx"), &|n| n.ends_with(".ptx"))?);
    found.extend(files_in(Path::new("src/cubin"), &|n| {
        n.ends_with(".cubin")
    })?);
    if let Ok(packages) = std::fs::read_dir(dir.join("python")) {
        for p in packages {
            let package = p?.path();
            if package
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("_kernels"))
            {
                let python = &|n: &str| {
                    matches!(n, "__init__.py" | "__init__.pyi" | "_imac.py" | "py.typed")
                };
                found.extend(files_in(
                    package.strip_prefix(dir).unwrap_or(&package),
                    python,
                )?);
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::{CrateOptions, GeneratedFile, RuntimeDep, crate_files, write_crate};

    const SCALE: &str = "kernel scale {\n    in x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body { y(i) = x(i); }\n}\n";

    /// The text of the generated crate's file `path`, for the spec `text`.
    fn crate_file(text: &str, runtime: RuntimeDep, path: &str) -> String {
        let source = ima_dsl::Source::new("specs/scale.ima", text);
        let module = ima_dsl::compile(&source).expect("the spec checks");
        let options = CrateOptions {
            runtime,
            archs: Vec::new(),
            python: false,
        };
        let files = crate_files(&module, &source.text, &options);
        let file = files.iter().find(|f| f.path == path).expect("the file");
        String::from_utf8(file.contents.clone()).expect("a text file")
    }

    /// The `ima-runtime` line of the `Cargo.toml` generated with `runtime`.
    fn runtime_line(runtime: RuntimeDep) -> String {
        let manifest = crate_file(SCALE, runtime, "Cargo.toml");
        let lines: Vec<&str> = manifest
            .lines()
            .filter(|l| l.starts_with("ima-runtime"))
            .collect();
        assert_eq!(lines.len(), 1, "{manifest}");
        lines[0].to_string()
    }

    #[test]
    fn the_runtime_is_a_crates_io_dependency_by_default() {
        assert_eq!(
            runtime_line(RuntimeDep::released()),
            format!("ima-runtime = \"{}\"", crate::VERSION)
        );
    }

    #[test]
    fn a_runtime_path_is_written_as_given_with_the_version() {
        assert_eq!(
            runtime_line(RuntimeDep::Path("../../runtime".into())),
            format!(
                "ima-runtime = {{ path = \"../../runtime\", version = \"{}\" }}",
                crate::VERSION
            )
        );
    }

    #[test]
    fn a_kernel_in_clusters_takes_only_sm_90a_images_on_a_9_0_device() {
        // The kernel exists only in a module compiled for sm_90a (module.cu's
        // __CUDA_ARCH_FEAT_SM90_ALL): shipped sm_90 PTX or SASS would lack it.
        let clusters = SCALE.replace("launch over y[i]", "launch grid(N) block(32) cluster(2)");
        let needs = |text: &str| {
            let runtime = crate_file(text, RuntimeDep::released(), "src/runtime.rs");
            runtime
                .lines()
                .find(|l| l.starts_with("const NEEDS_SM90A: bool = "))
                .expect("the constant")
                .to_string()
        };
        assert_eq!(needs(&clusters), "const NEEDS_SM90A: bool = true;");
        assert_eq!(needs(SCALE), "const NEEDS_SM90A: bool = false;");
    }

    #[test]
    fn an_unchanged_file_keeps_its_modification_time() {
        let dir = tempfile::tempdir().unwrap();
        let file = |contents: &str| GeneratedFile::text("src/lib.rs", contents.into());
        let stamp = GeneratedFile::text("imac.stamp", String::new());
        let path = dir.path().join("src/lib.rs");
        write_crate(dir.path(), &[file("a"), stamp.clone()]).unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH;
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        write_crate(dir.path(), &[file("a"), stamp.clone()]).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), old);
        write_crate(dir.path(), &[file("b"), stamp]).unwrap();
        assert_ne!(std::fs::metadata(&path).unwrap().modified().unwrap(), old);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "b");
    }

    /// A directory that holds files and no stamp is not written to: the crate would
    /// replace the user's Cargo.toml.
    #[test]
    fn a_directory_imac_did_not_write_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "mine").unwrap();
        let manifest = GeneratedFile::text("Cargo.toml", "imac's".into());
        let refused = write_crate(dir.path(), &[manifest]).unwrap_err();
        assert!(
            refused
                .to_string()
                .starts_with("it holds files and no imac.stamp"),
            "{refused}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap(),
            "mine"
        );
    }

    /// A crate written again without its Python package and an architecture keeps none
    /// of their files, and keeps what imac never writes (a lock file, a hand-added file).
    #[test]
    fn what_this_generation_does_not_write_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let text = |path: &str| GeneratedFile::text(path, path.into());
        let kept = [
            "imac.stamp",
            "Cargo.toml",
            "src/lib.rs",
            "src/k.cu",
            "src/ptx/sm_90.ptx",
        ];
        let dropped = [
            "pyproject.toml",
            "src/python.rs",
            "src/old_name.cu",
            "src/ptx/sm_80.ptx",
            "src/cubin/sm_80.cubin",
            "python/k_kernels/__init__.py",
            "python/k_kernels/_imac.py",
        ];
        let all: Vec<GeneratedFile> = kept.iter().chain(&dropped).map(|p| text(p)).collect();
        write_crate(dir.path(), &all).unwrap();
        for mine in ["Cargo.lock", "src/extra.rs", "python/k_kernels/notes.txt"] {
            std::fs::write(dir.path().join(mine), "mine").unwrap();
        }
        let now: Vec<GeneratedFile> = kept.iter().map(|p| text(p)).collect();
        write_crate(dir.path(), &now).unwrap();
        for path in kept
            .iter()
            .chain(&["Cargo.lock", "src/extra.rs", "python/k_kernels/notes.txt"])
        {
            assert!(dir.path().join(path).is_file(), "{path} removed");
        }
        for path in dropped {
            assert!(!dir.path().join(path).exists(), "{path} left");
        }
    }
}
