//! `imac doctor`: what this machine has for imac, and what does not fit.
//!
//! [`report`] probes the driver, the GPUs, NVRTC, the CUDA headers, compute-sanitizer and
//! nvdisasm without ever panicking: with no driver library it makes no driver call at all. The
//! [`Report`] is plain data; its `Display` is what `imac doctor` prints: whole lines, the
//! last one ended too, so that whatever is printed next starts a line of its own.

use std::fmt;
use std::path::PathBuf;

use cudarc::driver::result;
use cudarc::driver::sys::CUdevice_attribute as Attr;

use crate::compile::nvrtc_version;
use crate::locate::{CudaRoot, candidate_roots, nvrtc};
use crate::version::driver_version;

/// One GPU as the driver describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gpu {
    pub ordinal: usize,
    pub name: String,
    /// `sm_90`.
    pub arch: String,
}

/// Everything [`report`] found, or why it found nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The kernel driver's version (`580.65.06`), when the OS says.
    pub driver: Option<String>,
    /// The CUDA version the driver supports, or why it is unknown.
    pub driver_cuda: Result<(i32, i32), String>,
    /// The GPUs, or why they could not be listed.
    pub gpus: Result<Vec<Gpu>, String>,
    /// NVRTC's version and where it and the headers are, or why it was not found.
    pub nvrtc: Result<((i32, i32), CudaRoot), String>,
    /// Where compute-sanitizer is, if anywhere.
    pub sanitizer: Option<PathBuf>,
    /// Where nvdisasm is (`imac waits` reads SASS through it), if anywhere.
    pub nvdisasm: Option<PathBuf>,
}

/// Probes this machine; see the module documentation.
pub fn report() -> Report {
    let driver_cuda = driver_version().map_err(|e| e.to_string());
    let gpus = match &driver_cuda {
        Ok(_) => gpus(),
        Err(_) => Err("no driver to ask".into()),
    };
    let nvrtc = nvrtc()
        .and_then(|root| Ok((nvrtc_version()?, root.clone())))
        .map_err(|e| e.to_string());
    Report {
        driver: std::fs::read_to_string("/proc/driver/nvidia/version")
            .ok()
            .and_then(|text| kernel_module_version(&text)),
        driver_cuda,
        gpus,
        nvrtc,
        sanitizer: find_tool("compute-sanitizer"),
        nvdisasm: find_tool("nvdisasm"),
    }
}

/// A CUDA tool (`compute-sanitizer`, `nvdisasm`) on PATH, else under NVRTC's CUDA root or
/// another candidate root.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let mut roots: Vec<PathBuf> = nvrtc().iter().map(|r| r.root.clone()).collect();
    roots.extend(candidate_roots());
    tool(name, std::env::var_os("PATH"), &roots)
}

impl Report {
    /// What does not fit, one sentence each; empty when imac can compile and launch.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Err(e) = &self.driver_cuda {
            out.push(format!("{e}; kernels cannot run (NVRTC can still compile)"));
        }
        match &self.gpus {
            Ok(gpus) if gpus.is_empty() => {
                out.push("no GPU: the driver sees no CUDA device".into())
            }
            Err(e) if self.driver_cuda.is_ok() => {
                out.push(format!("the GPUs cannot be listed: {e}"))
            }
            _ => {}
        }
        match (&self.nvrtc, &self.driver_cuda) {
            (Err(e), _) => out.push(format!("{e}; kernels cannot be compiled")),
            (Ok(((nmaj, nmin), root)), Ok((dmaj, dmin))) if (nmaj, nmin) > (dmaj, dmin) => out
                .push(format!(
                    "NVRTC {nmaj}.{nmin} (at {}) is newer than the driver (CUDA {dmaj}.{dmin}): \
                     the driver cannot load its PTX; update the NVIDIA driver to one for CUDA \
                     {nmaj}.{nmin} or newer, or set IMA_CUDA_ROOT to a CUDA toolkit no newer \
                     than {dmaj}.{dmin}",
                    root.nvrtc.display()
                )),
            _ => {}
        }
        out
    }

    /// Whether imac can compile and launch here.
    pub fn fits(&self) -> bool {
        self.problems().is_empty()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let version = |(a, b): (i32, i32)| format!("{a}.{b}");
        match &self.driver_cuda {
            Ok(cuda) => writeln!(
                f,
                "driver:            {} (CUDA {})",
                self.driver.as_deref().unwrap_or("version unknown"),
                version(*cuda)
            )?,
            Err(_) => writeln!(f, "driver:            unavailable (see below)")?,
        }
        match &self.nvrtc {
            Ok((v, root)) => {
                writeln!(
                    f,
                    "NVRTC:             {} at {}",
                    version(*v),
                    root.nvrtc.display()
                )?;
                writeln!(f, "CUDA headers:      {}", root.include.display())?;
            }
            Err(e) => {
                writeln!(f, "NVRTC:             not found")?;
                writeln!(f, "CUDA headers:      not found")?;
                for line in e.lines() {
                    writeln!(f, "                   {line}")?;
                }
            }
        }
        match &self.gpus {
            Ok(gpus) if gpus.is_empty() => writeln!(f, "GPUs:              none")?,
            Ok(gpus) => {
                for g in gpus {
                    writeln!(f, "GPU {}:             {} ({})", g.ordinal, g.name, g.arch)?;
                }
            }
            Err(e) => writeln!(f, "GPUs:              unknown ({e})")?,
        }
        match &self.sanitizer {
            Some(p) => writeln!(f, "compute-sanitizer: {}", p.display())?,
            None => writeln!(
                f,
                "compute-sanitizer: not found on PATH or under a CUDA root (needed only to \
                 run kernels under it)"
            )?,
        }
        match &self.nvdisasm {
            Some(p) => writeln!(f, "nvdisasm:          {}", p.display())?,
            None => writeln!(
                f,
                "nvdisasm:          not found on PATH or under a CUDA root (needed only by \
                 `imac waits`)"
            )?,
        }
        let problems = self.problems();
        if problems.is_empty() {
            writeln!(f, "everything fits")
        } else {
            writeln!(f, "does not fit:")?;
            for p in problems {
                writeln!(f, "  - {p}")?;
            }
            Ok(())
        }
    }
}

/// Each GPU's name and architecture. The caller made sure the driver library is present.
fn gpus() -> Result<Vec<Gpu>, String> {
    let fail = |what: &'static str| move |e: result::DriverError| format!("{what}: {e}");
    result::init().map_err(fail("cuInit"))?;
    let count = result::device::get_count().map_err(fail("cuDeviceGetCount"))?;
    (0..count)
        .map(|i| {
            let dev = result::device::get(i).map_err(fail("cuDeviceGet"))?;
            let name = result::device::get_name(dev).map_err(fail("cuDeviceGetName"))?;
            let attr = |a| {
                // SAFETY: `dev` came from cuDeviceGet.
                unsafe { result::device::get_attribute(dev, a) }
                    .map_err(fail("cuDeviceGetAttribute"))
            };
            let major = attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
            let minor = attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
            Ok(Gpu {
                ordinal: i as usize,
                name,
                arch: format!("sm_{major}{minor}"),
            })
        })
        .collect()
}

/// `580.65.06` from `/proc/driver/nvidia/version`
/// (`NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ...`).
fn kernel_module_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM version:"))?;
    let rest = &line[line.find("Kernel Module")? + "Kernel Module".len()..];
    let version = rest.split_whitespace().next()?;
    version
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.')
        .then(|| version.to_string())
}

/// `name` on `path`, else under one of `roots` (`bin/NAME`, or `NAME/NAME` as the toolkit
/// keeps compute-sanitizer).
fn tool(name: &str, path: Option<std::ffi::OsString>, roots: &[PathBuf]) -> Option<PathBuf> {
    let on_path = path
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name));
    let in_roots = roots
        .iter()
        .flat_map(|r| [r.join("bin").join(name), r.join(name).join(name)]);
    on_path.chain(in_roots).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_kernel_module_version() {
        let text = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 \
                    06:54:38 UTC 2025\nGCC version:  gcc version 12.2.0\n";
        assert_eq!(kernel_module_version(text).as_deref(), Some("580.65.06"));
        assert_eq!(kernel_module_version("GCC version: 12"), None);
    }

    #[test]
    fn finds_a_tool_on_path_then_under_a_root() {
        let tmp = std::env::temp_dir().join(format!("ima-doctor-{}", std::process::id()));
        let (bin, root) = (tmp.join("bin-on-path"), tmp.join("cuda"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(root.join("compute-sanitizer")).unwrap();
        let path = Some(std::env::join_paths([&bin]).unwrap());
        assert_eq!(tool("compute-sanitizer", path.clone(), &[]), None);
        let in_root = root.join("compute-sanitizer/compute-sanitizer");
        std::fs::write(&in_root, "").unwrap();
        assert_eq!(
            tool(
                "compute-sanitizer",
                path.clone(),
                std::slice::from_ref(&root)
            ),
            Some(in_root)
        );
        std::fs::write(bin.join("compute-sanitizer"), "").unwrap();
        assert_eq!(
            tool("compute-sanitizer", path, std::slice::from_ref(&root)),
            Some(bin.join("compute-sanitizer"))
        );
        let nvdisasm = root.join("bin/nvdisasm");
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::write(&nvdisasm, "").unwrap();
        assert_eq!(tool("nvdisasm", None, &[root]), Some(nvdisasm));
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    fn root() -> CudaRoot {
        CudaRoot {
            root: "/cuda".into(),
            include: "/cuda/include".into(),
            nvrtc: "/cuda/lib64/libnvrtc.so.13".into(),
        }
    }

    #[test]
    fn says_what_does_not_fit() {
        let mut r = Report {
            driver: Some("575.51.03".into()),
            driver_cuda: Ok((12, 9)),
            gpus: Ok(vec![Gpu {
                ordinal: 0,
                name: "NVIDIA H200".into(),
                arch: "sm_90".into(),
            }]),
            nvrtc: Ok(((13, 0), root())),
            sanitizer: None,
            nvdisasm: None,
        };
        let text = r.to_string();
        assert!(
            text.starts_with(
                "driver:            575.51.03 (CUDA 12.9)\n\
                 NVRTC:             13.0 at /cuda/lib64/libnvrtc.so.13\n\
                 CUDA headers:      /cuda/include\n\
                 GPU 0:             NVIDIA H200 (sm_90)\n\
                 compute-sanitizer: not found"
            ),
            "{text}"
        );
        assert!(
            text.contains("NVRTC 13.0 (at /cuda/lib64/libnvrtc.so.13) is newer than the driver"),
            "{text}"
        );
        assert!(text.ends_with("no newer than 12.9\n"), "{text}");
        assert!(!r.fits());

        r.driver_cuda = Ok((13, 0));
        r.sanitizer = Some("/cuda/bin/compute-sanitizer".into());
        assert!(r.fits(), "{r}");
        assert!(r.to_string().ends_with("\neverything fits\n"), "{r}");

        r.gpus = Ok(vec![]);
        assert_eq!(r.problems(), ["no GPU: the driver sees no CUDA device"]);
    }
}
