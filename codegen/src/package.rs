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
/// `options.python`, and its stamp, which lists every file of the generation, the images
/// of `options.archs` too.
pub fn source_files(m: &ir::Module, spec_text: &str, options: &CrateOptions) -> Vec<GeneratedFile> {
    let mut files = crate_files(m, spec_text, options);
    if options.python {
        files = crate::python::package_files(m, files, options);
    }
    let images = options.archs.iter().flat_map(|a| image_paths(a));
    let mut listed: Vec<String> = files.iter().map(|f| f.path.clone()).chain(images).collect();
    listed.push(stamp::FILE.into());
    let stamp = Stamp {
        imac: crate::VERSION.into(),
        spec: m.file.clone(),
        spec_hash: stamp::hash(spec_text),
        runtime: options.runtime.clone(),
        archs: options.archs.clone(),
        python: options.python,
        files: listed,
    };
    files.push(GeneratedFile::text(stamp::FILE, stamp.render()));
    files
}

/// The files of the crate generated from `m`, checked from `spec_text`, but the
/// architectures' images ([`image_files`]), the Python package's and the stamp
/// ([`source_files`] has them all).
pub fn crate_files(m: &ir::Module, spec_text: &str, options: &CrateOptions) -> Vec<GeneratedFile> {
    let name = crate_name(m);
    let cu_file = crate::cu_file(&m.file);
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
        file(
            "src/lib.rs",
            render(&LibRs {
                version: crate::VERSION,
                spec_hash: &stamp::hash(spec_text),
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
/// `imac.stamp`): a directory that holds other files is refused, since the crate would
/// replace its `Cargo.toml`, `README.md` and `src/lib.rs`. Once every file is written,
/// those the previous stamp lists and this generation does not write are removed (a
/// recompile without `--python` or an `--arch` leaves none of theirs behind), and what no
/// stamp lists (Cargo.lock, a build's output, a hand-added file) is left alone.
pub fn write_crate(dir: &Path, files: &[GeneratedFile]) -> std::io::Result<()> {
    let stamp_path = dir.join(stamp::FILE);
    let stamped = stamp_path.is_file();
    let holds_files = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some());
    if holds_files && !stamped {
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
    // An old stamp that does not read (edited by hand) lists nothing to remove.
    let written_before = std::fs::read_to_string(&stamp_path)
        .ok()
        .and_then(|text| Stamp::parse(&text).ok())
        .map_or_else(Vec::new, |s| s.files);
    let write = |f: &GeneratedFile| -> std::io::Result<()> {
        let path = dir.join(&f.path);
        if std::fs::read(&path).is_ok_and(|old| old == f.contents) {
            return Ok(());
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, &f.contents)
    };
    // The stamp first where there was none (a run cut short leaves a crate imac will
    // write again), else last: until the removals are done, the old one lists what is left.
    let (stamps, others): (Vec<&GeneratedFile>, Vec<&GeneratedFile>) =
        files.iter().partition(|f| f.path == stamp::FILE);
    for f in stamps.iter().filter(|_| !stamped).chain(&others) {
        write(f)?;
    }
    for stale in &written_before {
        let path = dir.join(stale);
        // Written again under another name of the same file (another case, on a file
        // system that ignores it: a renamed spec's new .cu is the old one) is not stale.
        if files
            .iter()
            .any(|f| same_file(&path, &dir.join(&f.path), stale, &f.path))
        {
            continue;
        }
        if imacs_own(dir, stale) && path.is_file() {
            std::fs::remove_file(&path)?;
            // Its folders too (python/NAME_kernels, python/, src/ptx), where left empty.
            let mut folder = path.parent();
            while let Some(f) = folder {
                if f == dir || std::fs::remove_dir(f).is_err() {
                    break;
                }
                folder = f.parent();
            }
        }
    }
    for f in stamps {
        write(f)?;
    }
    Ok(())
}

/// Whether `a` (listed as `a_listed`) and `b` (`b_listed`) are one file: the same device
/// and inode where the system says, else names equal but for ASCII case.
fn same_file(a: &Path, b: &Path, a_listed: &str, b_listed: &str) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return (a.dev(), a.ino()) == (b.dev(), b.ino());
        }
    }
    a_listed.eq_ignore_ascii_case(b_listed)
}

/// Whether `listed`, a path a stamp in `dir` lists, is one imac may remove: inside the
/// crate (an edited stamp may climb out of it), and not through a symbolic link (a
/// `python/NAME_kernels` linked to a working folder is the user's).
fn imacs_own(dir: &Path, listed: &str) -> bool {
    let relative = Path::new(listed);
    let inside = (relative.components()).all(|c| matches!(c, std::path::Component::Normal(_)));
    let mut at = dir.to_path_buf();
    let linked = relative.components().any(|c| {
        at.push(c);
        std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink())
    });
    inside && !linked
}

#[cfg(test)]
mod tests {
    use super::{
        CrateOptions, GeneratedFile, RuntimeDep, crate_files, image_paths, source_files, stamp,
        write_crate,
    };

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

    /// What an old stamp lists is not removed where it is the user's or written again:
    /// behind a symbolic link (a package folder linked to a working copy), outside the
    /// crate (an edited stamp), or the file written again under another name (a renamed
    /// spec's, on a file system that ignores case; a hard link stands for it here). A
    /// file of another name is removed, and folders left empty go with their files.
    #[cfg(unix)]
    #[test]
    fn what_is_not_imacs_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let crate_dir = dir.path().join("crate");
        let text = |path: &str| GeneratedFile::text(path, path.into());
        let stamp = |files: &[&str]| {
            let listed: Vec<String> = files.iter().map(|f| f.to_string()).collect();
            GeneratedFile::text(
                stamp::FILE,
                format!(
                    "imac = \"0\"\nspec = \"k.ima\"\nspec-hash = \"h\"\nruntime-version = \"0\"\narch = \"\"\nfiles = {:?}\n",
                    listed.join(",")
                ),
            )
        };
        let old = [
            "src/Attn.cu",
            "src/attn.cu",
            "python/k_kernels/_imac.py",
            "src/ptx/sm_80.ptx",
            "../outside",
            "src/ALIAS.cu",
        ];
        let mut first: Vec<GeneratedFile> = old[..4].iter().map(|p| text(p)).collect();
        first.push(stamp(&old));
        write_crate(&crate_dir, &first).unwrap();
        std::fs::hard_link(
            crate_dir.join("src/attn.cu"),
            crate_dir.join("src/ALIAS.cu"),
        )
        .unwrap();
        std::fs::write(dir.path().join("outside"), "mine").unwrap();
        // The package folder becomes a link to the user's own.
        let mine = dir.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        std::fs::write(mine.join("_imac.py"), "mine").unwrap();
        std::fs::remove_dir_all(crate_dir.join("python/k_kernels")).unwrap();
        std::os::unix::fs::symlink(&mine, crate_dir.join("python/k_kernels")).unwrap();

        write_crate(&crate_dir, &[text("src/attn.cu"), stamp(&["src/attn.cu"])]).unwrap();
        assert!(mine.join("_imac.py").is_file(), "behind a link");
        assert!(dir.path().join("outside").is_file(), "outside the crate");
        assert!(crate_dir.join("src/ALIAS.cu").is_file(), "the same file");
        assert!(!crate_dir.join("src/Attn.cu").exists(), "another file");
        assert!(!crate_dir.join("src/ptx").exists(), "an emptied folder");
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

    /// A crate written again without its Python package and one of its architectures
    /// keeps none of their files, as its stamp listed them, and keeps what no stamp lists:
    /// a lock file, hand-added files, in the crate's folders too.
    #[test]
    fn what_this_generation_does_not_write_is_removed() {
        let source = ima_dsl::Source::new("specs/scale.ima", SCALE);
        let module = ima_dsl::compile(&source).expect("the spec checks");
        let generation = |python: bool, archs: &[&str]| {
            let options = CrateOptions {
                runtime: RuntimeDep::Version("0.1.0".into()),
                archs: archs.iter().map(|a| a.to_string()).collect(),
                python,
            };
            let mut files = source_files(&module, SCALE, &options);
            let images = archs.iter().flat_map(|a| image_paths(a));
            files.extend(images.map(|p| GeneratedFile::text(p, String::new())));
            files
        };
        let dir = tempfile::tempdir().unwrap();
        write_crate(dir.path(), &generation(true, &["sm_80", "sm_90"])).unwrap();
        let mine = [
            "Cargo.lock",
            "src/extra.cu",
            "python/scale_kernels/notes.txt",
        ];
        for path in mine {
            std::fs::write(dir.path().join(path), "mine").unwrap();
        }
        let now = generation(false, &["sm_90"]);
        write_crate(dir.path(), &now).unwrap();
        for path in now.iter().map(|f| f.path.as_str()).chain(mine) {
            assert!(dir.path().join(path).is_file(), "{path} removed");
        }
        for path in [
            "pyproject.toml",
            "src/python.rs",
            "src/ptx/sm_80.ptx",
            "src/cubin/sm_80.cubin",
            "python/scale_kernels/__init__.py",
            "python/scale_kernels/_imac.py",
        ] {
            assert!(!dir.path().join(path).exists(), "{path} left");
        }
    }
}
