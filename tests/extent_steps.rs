//! The index width of a launch counts every step of the extents the kernel computes, not
//! only their values: tests/in/extent_steps.ima's y is `N * M / K`, which at N = M = K =
//! 65536 is 65536, with `N * M` = 2^32 on the way, past a 32-bit entry point's `int`.
//! Nothing is allocated: the tensors are fakes.

#[allow(dead_code)]
mod extent_steps {
    include!("out/extent_steps.rs");
}

#[allow(dead_code)]
#[path = "../runtime/tests/common/fake.rs"]
mod fake;

use fake::{Fake, run, spread};
use ima::{DType, IndexWidth};

fn args(n: usize, m: usize, k: usize) -> Vec<Fake> {
    spread(vec![
        Fake::new(DType::F32, &[n], 0),
        Fake::new(DType::F32, &[m], 0),
        Fake::new(DType::F32, &[k], 0),
        Fake::new(DType::F32, &[n * m / k], 0),
    ])
}

#[test]
fn an_extent_whose_steps_pass_32_bits_takes_the_64_bit_entry_point() {
    let plan = run(&extent_steps::RATIO, &args(1 << 16, 1 << 16, 1 << 16), &[]).unwrap();
    assert_eq!(plan.index, IndexWidth::I64);
    // 2^31 - 1 on the way still fits; 2^31 does not.
    let plan = run(&extent_steps::RATIO, &args(46_340, 46_340, 46_340), &[]).unwrap();
    assert_eq!(plan.index, IndexWidth::I32);
    let plan = run(&extent_steps::RATIO, &args(1 << 16, 1 << 15, 1 << 16), &[]).unwrap();
    assert_eq!(plan.index, IndexWidth::I64);
    let plan = run(
        &extent_steps::RATIO,
        &args(1 << 16, (1 << 15) - 1, 1 << 16),
        &[],
    )
    .unwrap();
    assert_eq!(plan.index, IndexWidth::I32);
}
