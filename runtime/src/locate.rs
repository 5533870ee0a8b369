//! Finding NVRTC and the CUDA headers, with no GPU and no `nvcc` needed.
//!
//! cudarc's dynamic loading opens `libnvrtc.so.13` by *name* and panics when the dynamic
//! loader cannot find it, which it cannot for the pip wheels or a toolkit outside the
//! loader's path. So the runtime finds the library itself, opens it by absolute path
//! (its builtins library first, since NVRTC opens that one by name too) and keeps both
//! loaded for the life of the process: cudarc's later open by name then finds the soname
//! already loaded. When nothing is found the answer is [`Error::CudaNotFound`] listing
//! every place looked at, never a panic.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::Error;

/// A CUDA root usable for NVRTC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaRoot {
    pub root: PathBuf,
    /// The folder holding `cuda_fp16.h`, passed to NVRTC as an include path.
    pub include: PathBuf,
    /// The NVRTC shared library.
    pub nvrtc: PathBuf,
}

/// Where the wheels put the toolkit inside a virtual environment's site-packages.
const WHEEL_ROOT: &str = "nvidia/cu13";

/// Candidate roots, in the order they are tried: `$IMA_CUDA_ROOT`, `$CUDA_HOME`,
/// `$CUDA_PATH`, `/usr/local/cuda`, the wheels in `$VIRTUAL_ENV`, then the wheels in
/// `.cache/cuda-venv` of the current folder and of each folder above it (where the
/// project's test script installs them).
pub fn candidate_roots() -> Vec<PathBuf> {
    candidates(
        |k| std::env::var_os(k),
        std::env::current_dir().ok().as_deref(),
    )
}

fn candidates(env: impl Fn(&str) -> Option<OsString>, cwd: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["IMA_CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"]
        .into_iter()
        .filter_map(|k| env(k).filter(|v| !v.is_empty()).map(PathBuf::from))
        .collect();
    out.push(PathBuf::from("/usr/local/cuda"));
    if let Some(venv) = env("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        out.extend(wheel_roots(Path::new(&venv)));
    }
    for dir in cwd.into_iter().flat_map(Path::ancestors) {
        out.extend(wheel_roots(&dir.join(".cache/cuda-venv")));
    }
    out
}

/// `<venv>/lib/python3*/site-packages/nvidia/cu13`, for each Python found; the pattern
/// itself when there is none, so that the error still says where it looked.
fn wheel_roots(venv: &Path) -> Vec<PathBuf> {
    let lib = venv.join("lib");
    let mut pythons: Vec<PathBuf> = std::fs::read_dir(&lib)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path().join("site-packages").join(WHEEL_ROOT))
        .collect();
    pythons.sort();
    if pythons.is_empty() {
        pythons.push(lib.join("python3*/site-packages").join(WHEEL_ROOT));
    }
    pythons
}

/// The root's NVRTC pieces, if it has them all.
fn usable(root: &Path) -> Option<CudaRoot> {
    let include = root.join("include");
    if !include.join("cuda_fp16.h").is_file() {
        return None;
    }
    let nvrtc = ["lib64", "lib"]
        .iter()
        .flat_map(|dir| ["libnvrtc.so.13", "libnvrtc.so"].map(|name| root.join(dir).join(name)))
        .find(|p| p.is_file())?;
    Some(CudaRoot {
        root: root.to_path_buf(),
        include,
        nvrtc,
    })
}

/// The first usable root among `candidates`.
pub fn find_root(candidates: &[PathBuf]) -> Result<CudaRoot, Error> {
    candidates
        .iter()
        .find_map(|r| usable(r))
        .ok_or_else(|| Error::CudaNotFound {
            what: "NVRTC (lib64/ or lib/libnvrtc.so.13 with include/cuda_fp16.h)",
            looked: candidates.to_vec(),
        })
}

/// NVRTC's builtins library beside it (`libnvrtc-builtins.so.13.0`), if there is one.
fn builtins(nvrtc: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(nvrtc.parent()?)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libnvrtc-builtins.so"))
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

struct Loaded {
    root: CudaRoot,
    /// Never dropped: cudarc holds function pointers into these for the whole process.
    _libs: Vec<libloading::Library>,
}

fn open(path: &Path) -> Result<libloading::Library, Error> {
    // SAFETY: these are NVIDIA's NVRTC libraries, whose initialisers have no
    // preconditions; they stay loaded for the rest of the process.
    unsafe { libloading::Library::new(path) }.map_err(|e| Error::LibraryLoad {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn load() -> Result<Loaded, Error> {
    let root = find_root(&candidate_roots())?;
    let mut libs = Vec::new();
    if let Some(b) = builtins(&root.nvrtc) {
        libs.push(open(&b)?);
    }
    libs.push(open(&root.nvrtc)?);
    Ok(Loaded { root, _libs: libs })
}

/// Finds and loads NVRTC once per process; call before any cudarc NVRTC function.
pub fn nvrtc() -> Result<&'static CudaRoot, Error> {
    static NVRTC: OnceLock<Result<Loaded, Error>> = OnceLock::new();
    match NVRTC.get_or_init(load) {
        Ok(loaded) => Ok(&loaded.root),
        Err(e) => Err(e.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn candidates_come_in_order() {
        let vars = [
            ("CUDA_HOME", "/opt/cuda"),
            ("IMA_CUDA_ROOT", "/ima"),
            ("CUDA_PATH", ""),
        ];
        let c = candidates(env(&vars), Some(Path::new("/repo/runtime")));
        let shown: Vec<String> = c.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            shown,
            [
                "/ima",
                "/opt/cuda",
                "/usr/local/cuda",
                "/repo/runtime/.cache/cuda-venv/lib/python3*/site-packages/nvidia/cu13",
                "/repo/.cache/cuda-venv/lib/python3*/site-packages/nvidia/cu13",
                "/.cache/cuda-venv/lib/python3*/site-packages/nvidia/cu13",
            ]
        );
    }

    #[test]
    fn finds_a_wheel_layout_and_names_every_place_otherwise() {
        let tmp = std::env::temp_dir().join(format!("ima-locate-{}", std::process::id()));
        let venv = tmp.join(".cache/cuda-venv");
        let root = venv.join("lib/python3.12/site-packages/nvidia/cu13");
        std::fs::create_dir_all(root.join("include")).unwrap();
        std::fs::create_dir_all(root.join("lib")).unwrap();

        assert!(candidates(env(&[]), Some(&tmp)).contains(&root));
        let looked = [tmp.join("nothing"), root.clone()];
        let missing = find_root(&looked).unwrap_err().to_string();
        assert!(missing.contains("NVRTC"), "{missing}");
        for place in &looked {
            assert!(missing.contains(&place.display().to_string()), "{missing}");
        }

        std::fs::write(root.join("include/cuda_fp16.h"), "").unwrap();
        std::fs::write(root.join("lib/libnvrtc.so.13"), "").unwrap();
        std::fs::write(root.join("lib/libnvrtc-builtins.so.13.0"), "").unwrap();
        let found = find_root(&looked).unwrap();
        assert_eq!(found.nvrtc, root.join("lib/libnvrtc.so.13"));
        assert_eq!(found.include, root.join("include"));
        assert_eq!(
            builtins(&found.nvrtc),
            Some(root.join("lib/libnvrtc-builtins.so.13.0"))
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
