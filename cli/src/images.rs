//! PTX and SASS for the architectures named with `--arch`, through the runtime's NVRTC, so
//! that a generated crate loads its kernels without compiling them.

use ima_codegen::package::ArchImage;

/// One architecture's image, and what NVRTC said while producing it.
pub struct Compiled {
    pub image: ArchImage,
    pub log: String,
}

#[derive(Debug)]
pub enum ImageError {
    /// NVRTC was found nowhere: the crate compiles its CUDA C when loaded instead.
    Unavailable(ima_runtime::Error),
    /// NVRTC refused the source, or the architecture.
    Failed {
        arch: String,
        error: ima_runtime::Error,
    },
    /// A virtual architecture (`compute_90`): it has no SASS, and the crate loads only
    /// `sm_` images.
    NotReal(String),
}

/// Compiles `cuda` (named `cu_file` in messages) for each of `archs` (`sm_90`).
pub fn compile(cuda: &str, cu_file: &str, archs: &[String]) -> Result<Vec<Compiled>, ImageError> {
    if archs.is_empty() {
        return Ok(Vec::new());
    }
    // Refused before NVRTC is looked for: without it, a virtual one was left to a note.
    if let Some(arch) = archs.iter().find(|a| !ima_runtime::is_real_architecture(a)) {
        return Err(ImageError::NotReal(arch.clone()));
    }
    ima_runtime::nvrtc().map_err(ImageError::Unavailable)?;
    archs
        .iter()
        .map(|arch| {
            let compiled = ima_runtime::compile_cuda(cuda, cu_file, arch).map_err(|error| {
                ImageError::Failed {
                    arch: arch.clone(),
                    error,
                }
            })?;
            Ok(Compiled {
                image: ArchImage {
                    arch: arch.clone(),
                    ptx: compiled.ptx,
                    cubin: compiled.cubin,
                },
                log: compiled.log,
            })
        })
        .collect()
}
