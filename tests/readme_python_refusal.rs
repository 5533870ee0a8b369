//! The refused call of the README's "From Python (PyTorch)" section is the checker's own
//! text: the launch it shows (`rk.rms_norm(x, w, y, 1e-6)` with `x`, `y` of shape
//! [8, 1024] and `w` of length 512) checked against specs/rmsnorm.ima's contract here, and
//! the message found verbatim in that section, so that the two cannot drift apart. The
//! Python package raises `ContractError` with exactly this text (codegen/templates/python).

#[allow(dead_code)]
mod rmsnorm_spec {
    include!("out/specs/rmsnorm.rs");
}

use ima::{DType, DeviceId, DeviceLimits, TensorMeta, check};

/// The README's section, from its heading to the next.
fn python_section() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let start = readme
        .find("## From Python (PyTorch)")
        .expect("the section");
    let rest = &readme[start + 1..];
    let end = rest.find("\n## ").map_or(rest.len(), |e| e + 1);
    rest[..end].to_string()
}

#[test]
fn the_readme_shows_the_checker_s_text() {
    let device = DeviceId {
        ordinal: 0,
        context: 0xc0,
    };
    // Contiguous torch tensors, each at the start of its own allocation (as a Python
    // call sees them: the buffer is the span the view reaches).
    let meta = |shape: &'static [usize], strides: &'static [isize], base_ptr: u64| TensorMeta {
        dtype: DType::BF16,
        shape,
        strides,
        offset: 0,
        buffer_len: shape.iter().product(),
        base_ptr,
        device,
    };
    let args = [
        meta(&[8, 1024], &[1024, 1], 0x7f00_0000_0000),
        meta(&[512], &[1], 0x7f00_0010_0000),
        meta(&[8, 1024], &[1024, 1], 0x7f00_0020_0000),
    ];
    let text = check(
        &rmsnorm_spec::RMS_NORM,
        device,
        &DeviceLimits::SM_90,
        &args,
        &[ima::Scalar::F32(1e-6)],
    )
    .expect_err("w of length 512 against x's D = 1024")
    .to_string();
    let section = python_section();
    assert!(
        section.contains(&format!("ContractError: {text}\n")),
        "README.md's \"From Python (PyTorch)\" should show the refusal as raised:\n\
         ContractError: {text}\n\nThe section:\n{section}"
    );
}
