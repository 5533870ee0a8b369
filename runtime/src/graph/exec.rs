//! The driver's graph and its executable, owned: created and destroyed once each.

use std::ptr::null_mut;
use std::sync::Arc;

use cudarc::driver::sys::{
    self, CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC, CUDA_KERNEL_NODE_PARAMS, CUDA_MEMCPY3D,
    CUDA_MEMSET_NODE_PARAMS, CUgraph, CUgraphDependencyType, CUgraphEdgeData, CUgraphExec,
    CUgraphNode,
};
use cudarc::driver::{CudaContext, CudaStream, DriverError, result};

/// What one node of the graph runs, as the driver takes it: a kernel, a copy or a memset.
/// The driver copies the parameters (and the values a kernel's point at) during the call
/// that receives them.
#[derive(Clone, Copy)]
pub(super) enum Params<'p> {
    /// A kernel, cooperative (every block at once) for a `resident` or `persistent` launch.
    Kernel {
        params: &'p CUDA_KERNEL_NODE_PARAMS,
        cooperative: bool,
    },
    Copy(&'p CUDA_MEMCPY3D),
    Memset(&'p CUDA_MEMSET_NODE_PARAMS),
}

/// A `CUgraph` of kernel, copy and memset nodes, and its executable once instantiated.
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
    /// Set where the graph could not be put back as it was after a refused change: `retype`
    /// removed an edge and could put back neither kind (two nodes that must run in order
    /// would not), or a node's old parameters were refused on their way back
    /// ([`Exec::broken_by`]). The graph is never instantiated again.
    broken: Option<DriverError>,
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
            broken: None,
        })
    }

    /// Adds a node that runs after `after` (the graph is a chain, ordered as one stream
    /// orders launches and copies).
    pub(super) fn add(
        &mut self,
        after: Option<CUgraphNode>,
        params: Params<'_>,
    ) -> Result<CUgraphNode, DriverError> {
        self.ctx.bind_to_thread()?;
        let deps = after.as_slice();
        let (graph, ctx) = (self.graph, self.ctx.cu_ctx());
        let mut node = null_mut();
        // SAFETY: `graph` is live; `deps` holds nodes of it. A kernel's parameters point at
        // a kernel function of this context and at one value per kernel parameter; a copy's
        // or memset's, at device memory of this context that the graph borrows.
        unsafe {
            match params {
                Params::Kernel { params: p, .. } => {
                    sys::cuGraphAddKernelNode_v2(&mut node, graph, deps.as_ptr(), deps.len(), p)
                }
                Params::Copy(p) => {
                    sys::cuGraphAddMemcpyNode(&mut node, graph, deps.as_ptr(), deps.len(), p, ctx)
                }
                Params::Memset(p) => {
                    sys::cuGraphAddMemsetNode(&mut node, graph, deps.as_ptr(), deps.len(), p, ctx)
                }
            }
        }
        .result()?;
        if let Params::Kernel {
            cooperative: true, ..
        } = params
        {
            // A node's attributes outlive updates of its parameters, and an executable
            // takes them from the graph when instantiated.
            // SAFETY: the union is plain data, valid all zeros; only `cooperative` is read.
            let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
            value.cooperative = 1;
            let attr = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
            // SAFETY: `node` is the kernel node just added to the live `graph`.
            unsafe { sys::cuGraphKernelNodeSetAttribute(node, attr, &value) }.result()?;
        }
        self.discard_exec()?;
        Ok(node)
    }

    /// Instantiates the executable if there is none (the first replay, or the first after
    /// a node was added), with the nodes of `disabled` switched off in it.
    pub(super) fn instantiate(
        &mut self,
        disabled: impl Iterator<Item = CUgraphNode>,
    ) -> Result<(), DriverError> {
        if let Some(e) = self.broken {
            return Err(e);
        }
        if !self.exec.is_null() {
            return Ok(());
        }
        self.ctx.bind_to_thread()?;
        // SAFETY: `graph` is live and holds only kernel, copy and memset nodes of this
        // context.
        self.exec =
            unsafe { result::graph::instantiate(self.graph, sys::CUgraphInstantiate_flags(0)) }?;
        for node in disabled {
            if let Err(e) = self.set_enabled(node, false) {
                // Kept, it would run a node meant to be off at the next replay.
                self.discard_exec()?;
                return Err(e);
            }
        }
        Ok(())
    }

    /// Replaces a node's parameters, of the node's own kind, in the graph and, once
    /// instantiated, in the executable: later replays run with them; one in flight is not
    /// affected.
    pub(super) fn set(&mut self, node: CUgraphNode, params: Params<'_>) -> Result<(), DriverError> {
        self.ctx.bind_to_thread()?;
        let (exec, ctx) = (self.exec, self.ctx.cu_ctx());
        // SAFETY: `node` is a node of `graph` of the kind of `params`, which are as for
        // `add`; `exec`, where not null, was instantiated from `graph`.
        unsafe {
            match params {
                Params::Kernel { params: p, .. } => {
                    sys::cuGraphKernelNodeSetParams_v2(node, p).result()?;
                    if !exec.is_null() {
                        sys::cuGraphExecKernelNodeSetParams_v2(exec, node, p).result()?;
                    }
                }
                Params::Copy(p) => {
                    sys::cuGraphMemcpyNodeSetParams(node, p).result()?;
                    if !exec.is_null() {
                        sys::cuGraphExecMemcpyNodeSetParams(exec, node, p, ctx).result()?;
                    }
                }
                Params::Memset(p) => {
                    sys::cuGraphMemsetNodeSetParams(node, p).result()?;
                    if !exec.is_null() {
                        sys::cuGraphExecMemsetNodeSetParams(exec, node, p, ctx).result()?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Marks the graph as one that could not be put back as it was: every later replay
    /// refuses with `e`.
    pub(super) fn broken_by(&mut self, e: DriverError) -> Result<(), DriverError> {
        self.broken = Some(e);
        self.discard_exec()
    }

    /// Switches a node on or off in the executable, if there is one (a new one takes the
    /// state from `instantiate`'s `disabled`).
    pub(super) fn set_enabled(&mut self, node: CUgraphNode, on: bool) -> Result<(), DriverError> {
        if self.exec.is_null() {
            return Ok(());
        }
        self.ctx.bind_to_thread()?;
        // SAFETY: `node` is a node of the graph `exec` was instantiated from.
        unsafe { sys::cuGraphNodeSetEnabled(self.exec, node, u32::from(on)) }.result()
    }

    /// Replaces the edge `from` → `to` (two kernel nodes) with one of the other kind:
    /// `programmatic` (`to` may start once every block of `from` has called
    /// `griddepcontrol.launch_dependents` or exited) or ordinary. The next replay
    /// instantiates the graph again. Where the new edge cannot be added, the old one is put
    /// back and the error returned; where neither can, the graph is broken: every later
    /// replay refuses with that error.
    pub(super) fn retype(
        &mut self,
        from: CUgraphNode,
        to: CUgraphNode,
        programmatic: bool,
    ) -> Result<(), DriverError> {
        self.ctx.bind_to_thread()?;
        let old = edge_data(!programmatic);
        // SAFETY: `from` and `to` are nodes of `graph`, joined by an edge of the other kind.
        unsafe { sys::cuGraphRemoveDependencies_v2(self.graph, &from, &to, &old, 1) }.result()?;
        if let Err(e) = self.add_edge(from, to, programmatic) {
            if let Err(lost) = self.add_edge(from, to, !programmatic) {
                self.broken_by(lost)?;
            }
            return Err(e);
        }
        self.discard_exec()
    }

    /// Adds the edge `from` → `to`, programmatic or ordinary.
    fn add_edge(
        &self,
        from: CUgraphNode,
        to: CUgraphNode,
        programmatic: bool,
    ) -> Result<(), DriverError> {
        let edge = edge_data(programmatic);
        // SAFETY: `from` and `to` are nodes of `graph`; a programmatic edge joins two
        // kernel nodes.
        unsafe { sys::cuGraphAddDependencies_v2(self.graph, &from, &to, &edge, 1) }.result()
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

/// The data of an edge: programmatic (from the kernel's programmatic port), or ordinary,
/// which waits for the node before to complete.
fn edge_data(programmatic: bool) -> CUgraphEdgeData {
    let (from_port, type_) = if programmatic {
        (
            CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC as u8,
            CUgraphDependencyType::CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC as u8,
        )
    } else {
        (
            0,
            CUgraphDependencyType::CU_GRAPH_DEPENDENCY_TYPE_DEFAULT as u8,
        )
    };
    CUgraphEdgeData {
        from_port,
        to_port: 0,
        type_,
        reserved: [0; 5],
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
