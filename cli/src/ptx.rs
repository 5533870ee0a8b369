//! PTX for the architectures named with `--arch`, through the runtime's NVRTC, so that a
//! generated crate loads its kernels without compiling them.

use ima_codegen::package::Ptx;

/// One architecture's PTX, and what NVRTC said while producing it.
pub struct Compiled {
    pub ptx: Ptx,
    pub log: String,
}

#[derive(Debug)]
pub enum PtxError {
    /// NVRTC was found nowhere: the crate compiles its CUDA C when loaded instead.
    Unavailable(ima_runtime::Error),
    /// NVRTC refused the source, or the architecture.
    Failed(ima_runtime::Error),
}

/// Compiles `cuda` (named `cu_file` in messages) for each of `archs` (`sm_90`).
pub fn compile(cuda: &str, cu_file: &str, archs: &[String]) -> Result<Vec<Compiled>, PtxError> {
    if archs.is_empty() {
        return Ok(Vec::new());
    }
    ima_runtime::nvrtc().map_err(PtxError::Unavailable)?;
    archs
        .iter()
        .map(|arch| {
            let compiled =
                ima_runtime::compile_ptx(cuda, cu_file, arch).map_err(PtxError::Failed)?;
            Ok(Compiled {
                ptx: Ptx {
                    arch: arch.clone(),
                    text: compiled.ptx,
                },
                log: compiled.log,
            })
        })
        .collect()
}
