//! CUDA versions: the driver's and NVRTC's, and whether the driver can load what NVRTC
//! compiles.
//!
//! The driver JIT-compiles PTX only up to the PTX version of its own CUDA release, so PTX
//! from an NVRTC newer than the driver fails to load with a bare
//! `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`. [`crate::Module::compile`] compares the two
//! versions first and says which one to change instead.

use std::path::Path;
use std::sync::OnceLock;

use cudarc::driver::sys;

use crate::compile::nvrtc_version;
use crate::error::Error;
use crate::locate::nvrtc;

/// Whether the dynamic loader finds the CUDA driver library (`libcuda.so`). Every driver
/// call made without it would panic inside cudarc, so the runtime asks this first.
pub fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only opens (and closes) the library by name, as cudarc's own loader does.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// The CUDA version the driver supports, `(major, minor)`: `(13, 0)` for CUDA 13.0.
pub fn driver_version() -> Result<(i32, i32), Error> {
    if !driver_present() {
        return Err(Error::NoDriver);
    }
    let mut version = 0;
    // SAFETY: one valid out-pointer; the library is present, and the call needs no
    // initialised driver.
    unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_err(Error::driver("reading the driver's CUDA version"))?;
    Ok((version / 1000, version % 1000 / 10))
}

/// Refuses, before anything is compiled, to produce PTX the driver cannot load: NVRTC
/// newer than the driver.
pub(crate) fn check_driver_loads_nvrtc(file: &str) -> Result<(), Error> {
    loads(file, driver_version()?, nvrtc_version()?, &nvrtc()?.nvrtc)
}

/// Whether a driver for CUDA `driver` loads the PTX of NVRTC `compiler` (at `path`).
fn loads(file: &str, driver: (i32, i32), compiler: (i32, i32), path: &Path) -> Result<(), Error> {
    if driver < compiler {
        return Err(Error::PtxTooNew {
            file: file.to_string(),
            driver,
            nvrtc: Some(compiler),
            nvrtc_path: Some(path.to_path_buf()),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_driver_is_refused_with_what_to_change() {
        let path = Path::new("/cuda/lib/libnvrtc.so.13");
        assert!(loads("a.ima", (13, 0), (13, 0), path).is_ok());
        assert!(loads("a.ima", (13, 1), (13, 0), path).is_ok());
        let e = loads("a.ima", (12, 9), (13, 0), path).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the CUDA driver supports CUDA 12.9, older than NVRTC 13.0 at \
             /cuda/lib/libnvrtc.so.13, so it cannot load the PTX of a.ima; update the NVIDIA \
             driver to one for CUDA 13.0 or newer, or set IMA_CUDA_ROOT to a CUDA toolkit no \
             newer than 12.9"
        );
    }
}
