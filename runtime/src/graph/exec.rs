//! The driver's graph and its executable, owned: created and destroyed once each.

use std::ptr::null_mut;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUDA_KERNEL_NODE_PARAMS, CUgraph, CUgraphExec, CUgraphNode};
use cudarc::driver::{CudaContext, CudaStream, DriverError, result};

/// A `CUgraph` of kernel nodes, and its executable once instantiated.
///
/// The graph itself is kept beside the executable: node handles belong to it, and a node
/// added after a replay makes the executable stale, so the next replay instantiates the
/// graph again. Every parameter update is therefore written to both, so that a new
/// executable starts from the updated nodes.
#[derive(Debug)]
pub(super) struct Exec {
    ctx: Arc<CudaContext>,
    graph: CUgraph,
    /// Null until instantiated, and again after a node is added.
    exec: CUgraphExec,
}

impl Exec {
    pub(super) fn new(ctx: &Arc<CudaContext>) -> Result<Exec, DriverError> {
        ctx.bind_to_thread()?;
        let mut graph = null_mut();
        // SAFETY: an out-pointer for a new, empty graph; flags must be 0.
        unsafe { sys::cuGraphCreate(&mut graph, 0) }.result()?;
        Ok(Exec {
            ctx: ctx.clone(),
            graph,
            exec: null_mut(),
        })
    }

    /// Adds a kernel node that runs after `after` (the graph is a chain, ordered as one
    /// stream orders launches). The driver copies the parameters and the values they
    /// point at during the call.
    pub(super) fn add_kernel(
        &mut self,
        after: Option<CUgraphNode>,
        params: &CUDA_KERNEL_NODE_PARAMS,
    ) -> Result<CUgraphNode, DriverError> {
        self.ctx.bind_to_thread()?;
        let deps = after.as_slice();
        let mut node = null_mut();
        // SAFETY: `graph` is live; `deps` holds nodes of it; `params` points at a kernel
        // function of this context and at one value per kernel parameter.
        unsafe {
            sys::cuGraphAddKernelNode_v2(&mut node, self.graph, deps.as_ptr(), deps.len(), params)
        }
        .result()?;
        self.discard_exec()?;
        Ok(node)
    }

    /// Instantiates the executable if there is none (the first replay, or the first after
    /// a node was added), with the nodes of `disabled` switched off in it.
    pub(super) fn instantiate(
        &mut self,
        disabled: impl Iterator<Item = CUgraphNode>,
    ) -> Result<(), DriverError> {
        if !self.exec.is_null() {
            return Ok(());
        }
        self.ctx.bind_to_thread()?;
        // SAFETY: `graph` is live and holds only kernel nodes of this context.
        self.exec =
            unsafe { result::graph::instantiate(self.graph, sys::CUgraphInstantiate_flags(0)) }?;
        for node in disabled {
            self.set_enabled(node, false)?;
        }
        Ok(())
    }

    /// Replaces a kernel node's parameters in the graph and, once instantiated, in the
    /// executable: later replays run with them; one in flight is not affected.
    pub(super) fn set_kernel(
        &mut self,
        node: CUgraphNode,
        params: &CUDA_KERNEL_NODE_PARAMS,
    ) -> Result<(), DriverError> {
        self.ctx.bind_to_thread()?;
        // SAFETY: `node` is a kernel node of `graph`, and `params` as for `add_kernel`.
        unsafe { sys::cuGraphKernelNodeSetParams_v2(node, params) }.result()?;
        if !self.exec.is_null() {
            // SAFETY: as above; `exec` was instantiated from `graph`, which holds `node`.
            unsafe { sys::cuGraphExecKernelNodeSetParams_v2(self.exec, node, params) }.result()?;
        }
        Ok(())
    }

    /// Switches a kernel node on or off in the executable, if there is one (a new one
    /// takes the state from `instantiated`'s `disabled`).
    pub(super) fn set_enabled(&mut self, node: CUgraphNode, on: bool) -> Result<(), DriverError> {
        if self.exec.is_null() {
            return Ok(());
        }
        self.ctx.bind_to_thread()?;
        // SAFETY: `node` is a kernel node of the graph `exec` was instantiated from.
        unsafe { sys::cuGraphNodeSetEnabled(self.exec, node, u32::from(on)) }.result()
    }

    /// Enqueues a replay on `stream`, which is of this context, once instantiated.
    /// Replays of one executable run one after another, whatever their streams.
    pub(super) fn launch(&self, stream: &CudaStream) -> Result<(), DriverError> {
        if self.exec.is_null() {
            return Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_READY));
        }
        stream.context().bind_to_thread()?;
        // SAFETY: `exec` is live while `self` is.
        unsafe { result::graph::launch(self.exec, stream.cu_stream()) }
    }

    /// Destroys the executable (a replay in flight finishes first: the driver frees it
    /// then), so that the next replay instantiates the graph with its new nodes.
    fn discard_exec(&mut self) -> Result<(), DriverError> {
        if self.exec.is_null() {
            return Ok(());
        }
        let exec = std::mem::replace(&mut self.exec, null_mut());
        // SAFETY: instantiated here, destroyed once.
        unsafe { result::graph::exec_destroy(exec) }
    }
}

impl Drop for Exec {
    fn drop(&mut self) {
        // Errors have nowhere to go from a drop; the context records them.
        self.ctx.record_err(self.ctx.bind_to_thread());
        let discarded = self.discard_exec();
        self.ctx.record_err(discarded);
        // SAFETY: created in `new`, destroyed once, after its executable.
        self.ctx
            .record_err(unsafe { result::graph::destroy(self.graph) });
    }
}
