//! What the checks cost per launch, on the CPU: nanoseconds and heap allocations per call,
//! for a 1-tensor kernel and the attn_scores contract (3 tensors of rank 4, 2 constraints),
//! of [`check_launch`] (what `Kernel::launch` runs), of [`check()`] (which also builds
//! the [`super::Plan`]'s vectors), and of [`Memo::recall`] (what a launch with the last
//! passing launch's arguments runs instead).
//!
//! `cargo test --release -p ima-runtime --lib check_cost -- --ignored --nocapture`
//!
//! A test (not ignored) holds the launch path to no allocation at all.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;
use std::time::Instant;

use super::test_case::{Case, DEVICE};
use super::{Memo, check, check_launch};
use crate::device::DeviceLimits;

/// Counts this thread's heap allocations (tests run on several threads at once).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Heap allocations `f` makes on this thread.
fn allocations<R>(f: impl FnOnce() -> R) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    black_box(f());
    ALLOCATIONS.with(Cell::get) - before
}

/// Calls per timed round: `IMA_BENCH_CALLS`, or 200,000. A few thousand are enough under
/// `valgrind --tool=callgrind --dump-before='*cost::row*'`, which counts the instructions
/// of each case exactly (this machine's timings are noisy; instruction counts are not).
fn calls() -> u32 {
    std::env::var("IMA_BENCH_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200_000)
}

/// Nanoseconds per call of `f`: the best of several rounds, since other work on the
/// machine only ever adds time.
fn nanos<R>(mut f: impl FnMut() -> R) -> f64 {
    let calls = calls();
    (0..7)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                black_box(f());
            }
            start.elapsed().as_nanos() as f64 / f64::from(calls)
        })
        .fold(f64::INFINITY, f64::min)
}

fn cases() -> [(&'static str, Case); 2] {
    [("touch", Case::touch()), ("attn_scores", Case::attn())]
}

#[test]
fn launch_checks_allocate_nothing() {
    for (name, case) in cases() {
        let metas = case.metas();
        let run = || {
            check_launch(
                case.contract,
                true,
                DEVICE,
                &DeviceLimits::SM_90,
                &metas,
                &case.params,
            )
        };
        let checked = run().expect("the case passes the checks");
        assert_eq!(allocations(run), 0, "{name}");
        // Remembering a launch and recalling it allocate nothing either.
        let mut memo = Memo::default();
        let remember = |memo: &mut Memo| memo.remember(DEVICE, &metas, &case.params, &checked);
        assert_eq!(allocations(|| remember(&mut memo)), 0, "{name}");
        let recall = || memo.recall(DEVICE, &metas, &case.params).cloned();
        assert_eq!(allocations(recall), 0, "{name}");
        assert!(recall().is_some(), "{name}");
    }
}

#[test]
#[ignore = "a benchmark: run it in release with --nocapture"]
fn check_cost() {
    println!(
        "| case | `check_launch` ns | allocations | `check` ns | allocations | repeated launch (`Memo::recall`) ns |"
    );
    println!("|---|---|---|---|---|---|");
    for (name, case) in cases() {
        row(name, &case);
    }
}

/// One case's row of the table. Not inlined, so that a profiler sees each case apart.
#[inline(never)]
fn row(name: &str, case: &Case) {
    let metas = case.metas();
    // As `Kernel::launch` calls it: the kernel found its contract sound at load.
    let launch = || {
        check_launch(
            black_box(case.contract),
            true,
            DEVICE,
            &DeviceLimits::SM_90,
            black_box(&metas),
            &case.params,
        )
    };
    let plan = || {
        check(
            black_box(case.contract),
            DEVICE,
            &DeviceLimits::SM_90,
            black_box(&metas),
            &case.params,
        )
    };
    plan().expect("the case passes the checks");
    let mut memo = Memo::default();
    let checked = launch().expect("the case passes the checks");
    memo.remember(DEVICE, &metas, &case.params, &checked);
    // What a repeated launch runs instead of the checks.
    let recall = || {
        black_box(&memo)
            .recall(DEVICE, black_box(&metas), &case.params)
            .cloned()
    };
    assert!(recall().is_some());
    println!(
        "| {name} | {:.0} | {} | {:.0} | {} | {:.0} |",
        nanos(launch),
        allocations(launch),
        nanos(plan),
        allocations(plan),
        nanos(recall)
    );
}
