//! A sync-mode replay of a graph turns a real device fault into [`Error::KernelFault`]
//! inside [`Error::InGraph`], naming the faulting node and its kernel:
//! `cargo test -p ima-runtime --test gpu_graph_fault -- --ignored`.
//!
//! A device fault poisons the CUDA context for the rest of the process, so this is its own
//! test binary with one GPU test.

#[path = "common/fault.rs"]
mod fault;

use fault::{FAULT, FILL, SOURCE, under_sanitizer};
use ima_runtime::cudarc::driver::CudaContext;
use ima_runtime::cudarc::driver::sys::CUresult;
use ima_runtime::{Error, Graph, Module, Tensor};

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_sync_mode_replay_names_the_faulting_node() {
    let ctx = CudaContext::new(0).unwrap_or_else(|e| panic!("{e}"));
    if under_sanitizer() {
        eprintln!("not run under compute-sanitizer: this test faults on purpose");
        return;
    }
    let stream = ctx.new_stream().unwrap();
    let module =
        Module::compile(&ctx, "tests/gpu_graph_fault.rs", SOURCE).unwrap_or_else(|e| panic!("{e}"));
    let fill = module.kernel(&FILL).unwrap_or_else(|e| panic!("{e}"));
    let fault = module.kernel(&FAULT).unwrap_or_else(|e| panic!("{e}"));
    let mut y = Tensor::<f32>::zeros(&stream, &[64]).unwrap();
    let mut x = Tensor::<f32>::zeros(&stream, &[4]).unwrap();
    let mut graph = Graph::new(&stream).unwrap();
    let (ya, xa) = (graph.write(&mut y), graph.write(&mut x));
    graph.launch(&fill, &[ya], &[]).unwrap();
    graph.launch(&fill, &[ya], &[]).unwrap();
    graph.launch(&fault, &[xa], &[]).unwrap();
    graph.launch(&fill, &[ya], &[]).unwrap();
    graph.set_sync(true);
    let e = graph.replay(&stream).unwrap_err();
    let text = e.to_string();
    let Error::InGraph {
        node,
        kernel,
        source,
    } = e
    else {
        panic!("not a node's error: {text}")
    };
    assert_eq!((node, kernel), (2, "fault"), "{text}");
    let Error::KernelFault {
        kernel,
        shapes,
        error,
    } = *source
    else {
        panic!("not a kernel fault: {text}")
    };
    assert_eq!((kernel, shapes.as_str()), ("fault", "x: f32[4]"), "{text}");
    assert_eq!(error.0, CUresult::CUDA_ERROR_ILLEGAL_ADDRESS, "{text}");
    assert!(
        text.starts_with("graph node 2 (fault): kernel fault failed with x: f32[4]: "),
        "{text}"
    );
    // Dropping the graph and buffers of a poisoned context records errors; it does not
    // panic.
}
