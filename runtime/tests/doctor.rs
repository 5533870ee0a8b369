//! `doctor::report` on whatever machine runs the tests: it never panics, and with no
//! driver (CI) it says so plainly.

use ima_runtime::{doctor, driver_present};

#[test]
fn reports_this_machine_without_panicking() {
    let report = doctor::report();
    let text = report.to_string();
    eprint!("{text}");
    for line in ["driver:", "NVRTC:", "CUDA headers:", "compute-sanitizer:"] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
    if driver_present() {
        assert!(report.driver_cuda.is_ok(), "{text}");
    } else {
        assert!(!report.fits());
        assert!(
            text.contains("no CUDA driver: the dynamic loader finds no libcuda.so"),
            "{text}"
        );
        assert!(
            text.contains("GPUs:              unknown (no driver to ask)"),
            "{text}"
        );
    }
}
