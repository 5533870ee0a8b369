//! `launch grid(...) block(...) resident` on a GPU: a grid whose blocks wait for each other
//! runs to its end when the device holds it, is refused before it runs when it does not,
//! and keeps both in a graph (a cooperative kernel node) and in a sync-mode replay (each
//! node launched alone). The kernel is `handoff` of `tests/in/launch_forms.ima` through its
//! committed stubs: block b sets its flag once block b + 1 has set its own, so that the
//! grid finishes only if every block runs at once. `launch persistent(N)` (`gather_all`, a
//! grid barrier) launches N blocks, or as many as the device holds where that is fewer.
//!
//! The oracle for what the device holds is the device's own attributes: 32-thread blocks
//! of a kernel with a handful of registers and no shared memory are limited by the blocks
//! an SM may hold (`MAX_BLOCKS_PER_MULTIPROCESSOR`), on each of `MULTIPROCESSOR_COUNT` SMs.

#[allow(dead_code)]
mod forms {
    include!("out/launch_forms.rs");
}

use std::sync::Arc;

use ima::cudarc::driver::sys::CUdevice_attribute as Attr;
use ima::cudarc::driver::{CudaContext, CudaStream};
use ima::{CheckedMode, Error, Graph, Launched, Resident, Tensor, Violation};

use forms::HandoffArgs;

fn setup() -> (Arc<CudaContext>, Arc<CudaStream>, forms::Kernels) {
    let ctx = CudaContext::new(0).expect("a CUDA device");
    let stream = ctx.new_stream().expect("a CUDA stream");
    let kernels = forms::Kernels::load(&ctx).expect("launch_forms' module");
    (ctx, stream, kernels)
}

/// (SMs, blocks an SM may hold): the device's attributes.
fn device_holds(ctx: &CudaContext) -> (u32, u32) {
    let read = |a| ctx.attribute(a).expect("a device attribute") as u32;
    (
        read(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
        read(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR),
    )
}

/// The launch's error is the one `NotResident` violation, whose numbers it returns.
fn not_resident(e: Error) -> ([u32; 3], u32, u32, u32, u32) {
    match e {
        Error::Launch(l) => match l.violations.as_slice() {
            [
                Violation::NotResident {
                    form: Resident::Whole,
                    grid,
                    threads,
                    shared_bytes,
                    blocks_per_sm,
                    sms,
                },
            ] => (*grid, *threads, *shared_bytes, *blocks_per_sm, *sms),
            v => panic!("expected one NotResident violation, got {v:?}"),
        },
        e => panic!("expected a launch error, got {e}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_resident_grid_as_large_as_the_device_holds_runs_to_its_end() {
    let (ctx, stream, kernels) = setup();
    let (sms, per_sm) = device_holds(&ctx);
    let full = (sms * per_sm) as usize;
    for mode in [CheckedMode::Off, CheckedMode::Wait] {
        kernels.handoff.kernel().set_checked_mode(mode);
        for n in [1, 2, 264, full] {
            let mut flags = Tensor::<i32>::zeros(&stream, &[n]).unwrap();
            let launched = kernels
                .handoff
                .launch(&stream, HandoffArgs { flags: &mut flags })
                .unwrap();
            assert!(
                matches!(launched, Launched::Done { grid, .. } if grid == [n as u32, 1, 1]),
                "{mode:?}, N = {n}: {launched:?}"
            );
            let got = flags.to_host(&stream).unwrap();
            assert!(got.iter().all(|&f| f == 1), "{mode:?}, N = {n}: {got:?}");
        }
    }
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_resident_grid_larger_than_the_device_holds_is_refused_before_it_runs() {
    let (ctx, stream, kernels) = setup();
    let (sms, per_sm) = device_holds(&ctx);
    let n = (sms * per_sm + 1) as usize;
    let mut flags = Tensor::full(&stream, 7i32, &[n]).unwrap();
    let e = kernels
        .handoff
        .launch(&stream, HandoffArgs { flags: &mut flags })
        .unwrap_err();
    let text = e.to_string();
    assert_eq!(
        not_resident(e),
        ([n as u32, 1, 1], 32, 0, per_sm, sms),
        "release: {text}"
    );
    assert!(
        text.contains("handoff") && text.contains("launch_forms.ima"),
        "{text}"
    );
    // Checked mode's entry points hold fewer blocks, if any fewer: refused all the same.
    kernels.handoff.kernel().set_checked_mode(CheckedMode::Wait);
    let e = kernels
        .handoff
        .launch(&stream, HandoffArgs { flags: &mut flags })
        .unwrap_err();
    let (grid, threads, _, checked_per_sm, checked_sms) = not_resident(e);
    assert_eq!((grid, threads, checked_sms), ([n as u32, 1, 1], 32, sms));
    assert!(checked_per_sm <= per_sm, "{checked_per_sm} > {per_sm}");
    // Nothing ran: the flags are as the caller left them.
    let got = flags.to_host(&stream).unwrap();
    assert!(got.iter().all(|&f| f == 7));
    ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_resident_kernel_replays_in_a_graph_and_alone_in_sync_mode() {
    let (ctx, stream, kernels) = setup();
    let (sms, per_sm) = device_holds(&ctx);
    let full = (sms * per_sm) as usize;
    let mut flags = Tensor::full(&stream, 7i32, &[full]).unwrap();
    let mut too_many = Tensor::full(&stream, 7i32, &[full + 1]).unwrap();
    let mut graph = Graph::new(&stream).unwrap();
    let f = graph.write(&mut flags);
    graph.zero(f).unwrap();
    let handoff = kernels.handoff.kernel();
    graph.launch(handoff, &[f], &[]).unwrap();
    // A node the device cannot hold is refused when it is added.
    let over = graph.write(&mut too_many);
    match graph.launch(handoff, &[over], &[]).unwrap_err() {
        Error::InGraph { node, source, .. } => {
            assert_eq!(node, 2);
            assert_eq!(not_resident(*source).0, [full as u32 + 1, 1, 1]);
        }
        e => panic!("expected an error naming the graph's node, got {e}"),
    }
    for sync in [false, true] {
        graph.set_sync(sync);
        for replay in 0..3 {
            graph.replay(&stream).unwrap();
            let got = graph.to_host::<i32>(f, &stream).unwrap();
            assert!(
                got.iter().all(|&x| x == 1),
                "sync {sync}, replay {replay}: {} of {full} flags set",
                got.iter().filter(|&&x| x == 1).count()
            );
        }
    }
    drop(graph);
    ctx.check_err().unwrap();
}

/// `launch persistent(N) block(32)`: N blocks where the device holds them at once, else as
/// many as it holds, every one at once (its grid barrier ends only then); what `Launched`
/// reports is the grid that ran, and a graph's node launches the same.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_persistent_grid_is_as_large_as_asked_or_as_the_device_holds() {
    let (ctx, stream, kernels) = setup();
    let (sms, per_sm) = device_holds(&ctx);
    let full = (sms * per_sm) as usize;
    for (n, ran) in [(1, 1), (264, 264), (full, full), (2 * full + 3, full)] {
        let mut arrived = Tensor::<i32>::zeros(&stream, &[1]).unwrap();
        let mut seen = Tensor::full(&stream, -1i32, &[n]).unwrap();
        let launched = kernels
            .gather_all
            .launch(
                &stream,
                forms::GatherAllArgs {
                    arrived: &mut arrived,
                    seen: &mut seen,
                },
            )
            .unwrap();
        assert!(
            matches!(launched, Launched::Done { grid, .. } if grid == [ran as u32, 1, 1]),
            "N = {n}: {launched:?}"
        );
        assert_eq!(arrived.to_host(&stream).unwrap(), [ran as i32], "N = {n}");
        let got = seen.to_host(&stream).unwrap();
        assert!(got.iter().all(|&s| s == ran as i32), "N = {n}: {got:?}");
    }
    let n = 2 * full + 3;
    let mut arrived = Tensor::<i32>::zeros(&stream, &[1]).unwrap();
    let mut seen = Tensor::full(&stream, -1i32, &[n]).unwrap();
    let mut graph = Graph::new(&stream).unwrap();
    let (a, s) = (graph.write(&mut arrived), graph.write(&mut seen));
    graph.zero(a).unwrap();
    graph
        .launch(kernels.gather_all.kernel(), &[a, s], &[])
        .unwrap();
    for sync in [false, true] {
        graph.set_sync(sync);
        graph.replay(&stream).unwrap();
        assert_eq!(graph.to_host::<i32>(a, &stream).unwrap(), [full as i32]);
        let got = graph.to_host::<i32>(s, &stream).unwrap();
        assert!(got.iter().all(|&x| x == full as i32), "sync {sync}");
    }
    drop(graph);
    ctx.check_err().unwrap();
}
