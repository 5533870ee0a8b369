//! What a crate that `imac compile --arch` generated carries for each architecture, and
//! which of it a device loads: the crate's `runtime.rs` lists its images and asks
//! [`load_shipped`]; where nothing fits, it compiles the CUDA C with NVRTC instead.

use std::sync::Arc;

use cudarc::driver::CudaContext;

use crate::error::Error;
use crate::module::Module;

/// One architecture's image in a generated crate: the PTX and the SASS NVRTC assembled
/// from it (`ima_runtime::compile_cuda`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShippedImage {
    /// `sm_90`, `sm_90a`.
    pub arch: &'static str,
    pub ptx: &'static str,
    pub cubin: &'static [u8],
}

/// What of a crate's images a device loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// SASS of the device's major version, not newer than the device: it runs as it is.
    Sass(ShippedImage),
    /// PTX of an older major version, which the driver compiles for the device.
    Ptx(ShippedImage),
}

/// The image that fits a device of compute capability `(major, minor)`: `sm_XYa`, compiled
/// for that exact device with its architecture-specific features, or else the newest plain
/// `sm_XY` not newer than the device. On a 9.0 device a module with `tma` kernels
/// (`needs_sm90a`) takes only `sm_90a`. The image's SASS where it was assembled for the
/// device's major version (SASS for `sm_XY` runs on `X.Z`, Z >= Y), else its PTX.
pub fn fitting(images: &[ShippedImage], capability: (i32, i32), needs_sm90a: bool) -> Option<Fit> {
    let (major, minor) = capability;
    let device = major * 10 + minor;
    images
        .iter()
        .filter_map(|image| {
            let digits = image.arch.strip_prefix("sm_")?;
            let (digits, specific) = match digits.strip_suffix('a') {
                Some(d) => (d, true),
                None => (digits, false),
            };
            let sm = digits.parse::<i32>().ok()?;
            let fits = if specific {
                sm == device
            } else {
                sm <= device && !(needs_sm90a && device == 90)
            };
            fits.then_some(((sm, specific), image))
        })
        .max_by_key(|&(key, _)| key)
        .map(|((sm, _), &image)| {
            if sm / 10 == major {
                Fit::Sass(image)
            } else {
                Fit::Ptx(image)
            }
        })
}

/// Loads the image of `images` that fits `ctx`'s device ([`fitting`]), or None where none
/// does.
pub fn load_shipped(
    ctx: &Arc<CudaContext>,
    file: &str,
    images: &[ShippedImage],
    needs_sm90a: bool,
) -> Option<Result<Module, Error>> {
    let capability = match ctx.compute_capability() {
        Ok(c) => c,
        Err(e) => {
            return Some(Err(Error::driver(
                "reading the device's compute capability",
            )(e)));
        }
    };
    Some(match fitting(images, capability, needs_sm90a)? {
        Fit::Sass(image) => Module::load_cubin(ctx, file, image.cubin, image.ptx),
        Fit::Ptx(image) => Module::load_ptx(ctx, file, image.ptx),
    })
}

#[cfg(test)]
mod tests {
    use super::{Fit, ShippedImage, fitting};

    fn image(arch: &'static str) -> ShippedImage {
        ShippedImage {
            arch,
            ptx: arch,
            cubin: b"",
        }
    }

    #[test]
    fn a_device_takes_its_own_major_versions_sass_and_older_ones_ptx() {
        let images = [image("sm_80"), image("sm_90")];
        assert_eq!(
            fitting(&images, (9, 0), false),
            Some(Fit::Sass(image("sm_90")))
        );
        assert_eq!(
            fitting(&images, (8, 6), false),
            Some(Fit::Sass(image("sm_80")))
        );
        assert_eq!(
            fitting(&images, (10, 0), false),
            Some(Fit::Ptx(image("sm_90")))
        );
        assert_eq!(fitting(&images, (7, 5), false), None);
        assert_eq!(fitting(&[image("sm_86")], (8, 0), false), None);
    }

    #[test]
    fn architecture_specific_images_fit_their_own_device_only() {
        let images = [image("sm_90"), image("sm_90a")];
        assert_eq!(
            fitting(&images, (9, 0), false),
            Some(Fit::Sass(image("sm_90a")))
        );
        assert_eq!(fitting(&[image("sm_90a")], (10, 0), false), None);
        assert_eq!(fitting(&[image("sm_90a")], (8, 9), false), None);
    }

    #[test]
    fn tma_kernels_on_a_9_0_device_take_sm_90a_only() {
        assert_eq!(
            fitting(&[image("sm_80"), image("sm_90")], (9, 0), true),
            None
        );
        assert_eq!(
            fitting(&[image("sm_90"), image("sm_90a")], (9, 0), true),
            Some(Fit::Sass(image("sm_90a")))
        );
        // Elsewhere the kernels are left out of every image, and a plain one fits.
        assert_eq!(
            fitting(&[image("sm_80")], (8, 9), true),
            Some(Fit::Sass(image("sm_80")))
        );
    }

    #[test]
    fn names_that_are_not_real_architectures_fit_nothing() {
        let images = [image("compute_90"), image("sm_9x"), image("90")];
        assert_eq!(fitting(&images, (9, 0), false), None);
    }
}
