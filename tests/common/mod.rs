//! Helpers shared by the integration tests (`mod common;` in each).

// Each test binary compiles this module for itself and uses only part of it.
#![allow(dead_code)]

use std::path::PathBuf;

pub mod dense;
pub mod values;
pub mod w4a16;

/// The workspace root, where specs/ and tests/ live.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `.ima` files of a folder of the workspace, sorted.
pub fn specs_in(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("cannot read {dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ima"))
        .collect();
    v.sort();
    v
}

/// Deterministic pseudo-random values in [-1, 1) from a 64-bit LCG: the same seed gives
/// the same values in every test. With 24 bits of mantissa they round to f16 and bf16
/// without surprises, and the references read the rounded values back.
pub fn lcg(seed: u64) -> impl Iterator<Item = f32> {
    let mut s = seed;
    std::iter::repeat_with(move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    })
}

/// The columns of W that output column j of a fused gate/up projection reads (y half as
/// wide as W, gate's and up's columns in turn by `unit`, the specs' GATE_UP_UNIT): gate's
/// 2 unit ⌊j / unit⌋ + j mod unit, and up's one unit after it.
pub fn gate_up_columns(j: usize, unit: usize) -> (usize, usize) {
    let gate = 2 * unit * (j / unit) + j % unit;
    (gate, gate + unit)
}

/// silu(g) · u of the f64 products g and u, and how far from it a kernel may land when
/// its g and u may each be off by `g_err` and `u_err`: silu'(g), below 1.1 everywhere,
/// and silu(g) carry them into the product. The caller adds the output's own rounding.
pub fn silu_and_mul(g: f64, u: f64, g_err: f64, u_err: f64) -> (f64, f64) {
    let silu = g / (1.0 + (-g).exp());
    (silu * u, 1.1 * g_err * u.abs() + silu.abs() * u_err)
}

/// The launch error of a refused launch of `kernel`; panics on anything else.
pub fn refused(result: Result<ima::Launched, ima::Error>, kernel: &str) -> ima::LaunchError {
    match result {
        Err(ima::Error::Launch(e)) => {
            assert_eq!(e.kernel, kernel, "{e}");
            assert!(!e.violations.is_empty(), "{e}");
            let message = e.to_string();
            assert!(message.starts_with(&format!("{kernel}(")), "{message}");
            println!("{message}");
            e
        }
        Err(other) => panic!("expected a launch error from {kernel}, got: {other}"),
        Ok(launched) => panic!("{kernel} launched ({launched:?}) where it should refuse"),
    }
}

/// Asserts that `result` is the checker's refusal of `kernel` and that it names each
/// constraint of `constraints` (their spec text, as `K % 8 == 0`) as not holding.
pub fn assert_refused_by(
    result: Result<ima::Launched, ima::Error>,
    kernel: &str,
    constraints: &[&str],
) {
    let e = refused(result, kernel);
    for want in constraints {
        assert!(
            e.violations
                .iter()
                .any(|v| matches!(v, ima::Violation::Constraint { text, .. } if text == want)),
            "{kernel}: the refusal does not name `{want}`:\n{e}"
        );
    }
}
