//! CUDA graphs of checked launches: built once from a sequence of launches, replayed many
//! times, their parameters changed only through an update that checks them again.
//!
//! A replay reuses the pointers, sizes and grids its nodes were given. Elsewhere that is how
//! a buffer freed or resized since capture is read after free. Here:
//!
//! - **The graph borrows every tensor its launches use**, for as long as it lives
//!   ([`Graph::read`] takes `&'a`, [`Graph::write`] `&'a mut`), so a captured tensor
//!   cannot be dropped, moved, or written elsewhere while the graph can be replayed: that
//!   is a compile error (runtime/tests/ui/graph_*.rs). A tensor is bound once and named by
//!   its [`GraphArg`] in any number of launches, so one node may write what the next reads.
//! - **Every launch is checked when it enters the graph** ([`Graph::launch`]), by the same
//!   checks and plan as [`Kernel::launch`]; nothing reaches the graph that a direct launch
//!   would refuse. [`Graph::update`] changes one node's tensors or params and checks them
//!   again first; a refused update leaves the graph as it was.
//! - **Checks on the device work in a replay.** A node whose kernel takes a violation
//!   record (checked mode, or value contracts) has a record of its own, so a report names
//!   the node and its kernel ([`Error::InGraph`]).
//! - **Replays are ordered like launches.** Each replay waits for the pending work on the
//!   graph's tensors and is recorded as their latest read or write (cudarc's events, as in
//!   crate::kernel, "Lifetimes"), so a launch on another stream that reads what a replay
//!   wrote waits for it, and a tensor freed after the graph is freed after its last replay.
//!   Dropping a graph waits for its last replay, which may still use the nodes' records.
//!
//! # Kernel nodes, not stream capture
//!
//! The graph is built from kernel nodes (`cuGraphAddKernelNode`) rather than by capturing
//! a stream. A node's handle is what an update (`cuGraphExecKernelNodeSetParams`) and a
//! report need, and building the node gives it directly. Capturing would also run
//! [`Kernel::launch`]'s event waits and records, pooled-record copies and sync-mode
//! synchronisations inside the capture, where waiting on an event recorded outside it or
//! synchronising is an error. The node's parameters come from the same list as a direct
//! launch's (crate::abi), so the two cannot disagree. Copies and fills are memcpy and
//! memset nodes (`cuGraphAddMemcpyNode`, `cuGraphAddMemsetNode`), numbered with the
//! kernel nodes. The nodes form a chain, ordered as one stream orders launches.
//!
//! # Programmatic edges
//!
//! A kernel node whose kernel starts early ([`Kernel::starts_early`]: its spec marks the
//! arguments no kernel ahead of it writes `early`, and its body waits for the grids ahead
//! before it touches the others) is joined to the kernel node before it by a programmatic
//! edge (`cuGraphAddDependencies_v2` from the programmatic port): it may start once every
//! block of that one has called `ima_launch_dependents()` or exited, and do what it does
//! before its wait while that kernel drains. Only where no node ahead of it writes one of
//! its `early` arguments, and neither it nor the node before is switched off (graph/early.rs
//! says why each); an update that breaks this makes the edge ordinary for the graph's
//! life. `IMA_PROGRAMMATIC_LAUNCH=0` keeps every edge ordinary. Direct launches keep
//! stream order: what a stream ran before them is not known.
//!
//! # Modes
//!
//! A node keeps the checked mode its kernel had when it was launched into the graph
//! ([`Kernel::set_checked_mode`]):
//!
//! - `Off`: the release entry point; for a kernel with value contracts it fills the node's
//!   record with a bad entry, reported as in `Deferred`.
//! - `Deferred`: the checked entry point; a violation is returned by the next
//!   [`Graph::replay`] (which then does not replay) or by [`Graph::check`], with
//!   `deferred` set. Its count covers the replays since the last report.
//! - `Wait`: the checked entry point; a replay with such a node waits for the graph and
//!   returns the violation itself.
//!
//! Each call reports one node's record, the first in node order; a later call reports the
//! next.
//!
//! *Sync mode* ([`Graph::set_sync`], on when a kernel of the graph had sync mode on at
//! launch, as with `IMA_SYNC=1`) attributes a fault to its node: a sync-mode replay
//! launches each node's kernel alone, with exactly the node's parameters, and waits after
//! each, so that a fault is reported as [`Error::KernelFault`] inside [`Error::InGraph`]
//! naming the node. It does not run the graph's executable itself. Outside sync mode the
//! driver reports a fault of a replay for the whole graph ([`Error::GraphFault`]): the
//! context is poisoned, and CUDA does not say which node faulted.
//!
//! # Limits
//!
//! - A tensor bound into a graph stays borrowed until the graph is dropped, an update's
//!   new tensors included: to switch between buffers, bind all of them (declared before
//!   the graph) and update the node to the other one.
//! - A tensor bound for writing is read through the graph while it lives
//!   ([`Graph::to_host`]); an input bound for reading can be read as usual.
//! - Nodes are imac launches and the plain work a decode step needs between them: a copy
//!   from one bound tensor into another ([`Graph::copy`]) and a fill with zeros
//!   ([`Graph::zero`]), checked like a launch's arguments. No foreign kernels, and no
//!   upload from the host: the node would keep the host buffer's address, so the buffer
//!   would stay borrowed, unchanged, for the graph's life, and its data could not change
//!   between replays, the one reason to upload in a replay. New input data goes into a
//!   tensor not bound yet, which is then bound and a node updated to read it (or copy it
//!   in), as for any new buffer.
//! - A tensor passed to a stub's `launch_in` is bound by that call, for the graph's life:
//!   an output so captured cannot be read by another node's stub, so a tensor one node
//!   writes and a later one reads is bound once ([`Graph::write`]) and named by handle
//!   in [`Graph::launch`].
//! - A [`crate::RawTensor`] has no events: ordering its replays is the caller's duty, as
//!   for its launches.
//! - A graph is used from one thread (CUDA graphs are not thread-safe): it is not `Send`.

mod bound;
mod early;
mod exec;
mod memory;
mod node;

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaStream, DriverError};
use smallvec::SmallVec;

use crate::arg::{KernelArg, ReadTensor, WriteTensor};
use crate::capacity::ARGS;
use crate::check::TensorMeta;
use crate::checked::CheckedMode;
use crate::contract::Scalar;
use crate::device::DeviceId;
use crate::error::Error;
use crate::kernel::{Kernel, describe};
use crate::tensor::Element;
use bound::Bound;
pub use bound::GraphArg;
use exec::Exec;
use memory::Memory;
use node::{KernelWork, Node, NodeLaunch, Update, Work};

/// A CUDA graph of checked launches that borrows, for `'a`, every tensor and kernel its
/// launches use. See the module documentation.
#[derive(Debug)]
pub struct Graph<'a> {
    /// The stream the graph was made on: its context is the graph's, and the nodes'
    /// records live on it.
    stream: Arc<CudaStream>,
    exec: Exec,
    bound: Bound<'a>,
    nodes: Vec<Node<'a>>,
    /// Recorded after each replay.
    done: CudaEvent,
    sync: bool,
}

impl<'a> Graph<'a> {
    /// An empty graph in `stream`'s context.
    pub fn new(stream: &Arc<CudaStream>) -> Result<Self, Error> {
        let ctx = stream.context();
        let exec = Exec::new(ctx).map_err(Error::driver("creating a CUDA graph"))?;
        let done = ctx
            .new_event(None)
            .map_err(Error::driver("creating a graph's replay event"))?;
        Ok(Graph {
            stream: stream.clone(),
            exec,
            bound: Bound::new(),
            nodes: Vec::new(),
            done,
            sync: false,
        })
    }

    /// Binds a tensor for the graph's life, for reading ([`KernelArg::Read`]) or for
    /// reading and writing ([`KernelArg::Write`]); a logical shape is passed through.
    /// Quantized weights bind each of their [`crate::QuantTensor::kernel_args`].
    pub fn bind(&mut self, arg: KernelArg<'a>) -> GraphArg {
        self.bound.bind(arg)
    }

    /// Binds an input for the graph's life.
    pub fn read<T: Element>(&mut self, t: &'a impl ReadTensor<T>) -> GraphArg {
        self.bind(KernelArg::read(t))
    }

    /// Binds a tensor the graph's launches may write (and read) for the graph's life.
    pub fn write<T: Element>(&mut self, t: &'a mut impl WriteTensor<T>) -> GraphArg {
        self.bind(KernelArg::write(t))
    }

    /// A handle to the tensor `arg` names (bound into this graph, contiguous) seen as the
    /// row-major `shape`, of as many elements: a `[B, H, D]` output passed as the
    /// `[B, H * D]` input of the next launch. It names the same bound tensor, with the
    /// access it was bound for; launches check it with the new shape.
    pub fn reshape(&mut self, arg: GraphArg, shape: &[usize]) -> Result<GraphArg, Error> {
        self.bound.reshape(arg, shape)
    }

    /// Checks a launch of `kernel` on `args` (in the contract's order) and `params`, as
    /// [`Kernel::launch`] would, and adds it as the graph's next node, after the others.
    /// Returns the node's index, by which updates and reports name it. A launch whose
    /// domain is empty becomes a node switched off until an update gives it work.
    pub fn launch(
        &mut self,
        kernel: &'a Kernel,
        args: &[GraphArg],
        params: &[Scalar],
    ) -> Result<usize, Error> {
        let name = kernel.contract().name;
        let in_graph = self.new_node_error(name);
        let mode = kernel.checked_mode();
        let launch = NodeLaunch::prepare(kernel, &self.stream, &self.bound, args, params, mode)
            .map_err(in_graph)?;
        let record = if kernel.takes_record(mode) {
            let record = kernel.new_record(&self.stream).map_err(in_graph)?;
            // The record's clean image is copied on the graph's stream, and a replay on
            // another stream does not wait for that copy (no event tracks the address a
            // node holds): finish it now.
            self.stream
                .synchronize()
                .map_err(|e| in_graph(Error::driver(format!("cleaning {name}'s record"))(e)))?;
            Some(record)
        } else {
            None
        };
        let launch = launch.with_record(record.as_ref());
        self.sync |= kernel.is_sync();
        let work = Work::Kernel(KernelWork {
            kernel,
            params: params.into(),
            mode,
            record,
            launch,
        });
        self.push(args, work)
    }

    /// [`Graph::launch`] on tensors it binds itself, for the graph's life: what a
    /// generated stub's `launch_in` calls with its named arguments. A refused launch
    /// binds nothing. Their handles are [`Graph::args`] of the node.
    pub fn launch_args(
        &mut self,
        kernel: &'a Kernel,
        args: impl IntoIterator<Item = KernelArg<'a>>,
        params: &[Scalar],
    ) -> Result<usize, Error> {
        let before = self.bound.len();
        let handles: SmallVec<[GraphArg; ARGS]> = args.into_iter().map(|a| self.bind(a)).collect();
        self.launch(kernel, &handles, params)
            .inspect_err(|_| self.bound.truncate(before))
    }

    /// Adds a copy of every element of `src` into `dst` as the graph's next node, once
    /// both are found bound into this graph (`dst` for writing), contiguous, not empty,
    /// of the same element type and count, and apart. Returns the node's index.
    pub fn copy(&mut self, src: GraphArg, dst: GraphArg) -> Result<usize, Error> {
        let args = [src, dst];
        let memory =
            Memory::copy(&self.bound, &args, self.device()).map_err(self.new_node_error("copy"))?;
        self.push(&args, Work::Memory(memory))
    }

    /// Adds a fill of `dst` with zeros as the graph's next node, once it is found bound
    /// into this graph for writing, contiguous and not empty. Returns the node's index.
    pub fn zero(&mut self, dst: GraphArg) -> Result<usize, Error> {
        let args = [dst];
        let memory =
            Memory::zero(&self.bound, &args, self.device()).map_err(self.new_node_error("zero"))?;
        self.push(&args, Work::Memory(memory))
    }

    /// Gives node `node` new tensors (bound into this graph) and params, once they pass
    /// its checks: its kernel's, in the node's mode, or a copy's or fill's (which take
    /// no params). Replays from then on use them (one already enqueued does not).
    /// Refused, the node keeps what it had.
    pub fn update(
        &mut self,
        node: usize,
        args: &[GraphArg],
        params: &[Scalar],
    ) -> Result<(), Error> {
        let (device, nodes) = (self.device(), self.nodes.len());
        let n = self
            .nodes
            .get_mut(node)
            .ok_or_else(|| no_node(node, nodes))?;
        let name = n.work.name();
        let in_node = |source| Error::InGraph {
            node,
            kernel: name,
            source: Box::new(source),
        };
        let driver = |e| in_node(Error::driver(format!("updating {name}'s node"))(e));
        // The checks first, which change nothing.
        let update = match &n.work {
            Work::Kernel(k) => Update::Kernel(
                NodeLaunch::prepare(k.kernel, &self.stream, &self.bound, args, params, k.mode)
                    .map_err(in_node)?
                    .with_record(k.record.as_ref()),
                params.into(),
            ),
            Work::Memory(m) => {
                if !params.is_empty() {
                    return Err(in_node(Error::GraphUsage {
                        what: format!("updating a {name} node with {} params", params.len()),
                        reason: "a copy or fill takes none".into(),
                    }));
                }
                Update::Memory(m.again(&self.bound, args, device).map_err(in_node)?)
            }
        };
        // Then the node's new launch and tensors in place, and the edges they make unsafe
        // ordinary before the driver sees them: a refusal on the way puts the node back as
        // it was (an edge made ordinary stays so, which is safe either way).
        let old = (
            n.work.swap(update),
            std::mem::replace(&mut n.args, args.into()),
        );
        let set = (self.ordinary_edges_after_update(node)).and_then(|()| self.write_node(node));
        if let Err(e) = set {
            let n = &mut self.nodes[node];
            n.work.swap(old.0);
            n.args = old.1;
            // The driver may have taken the new parameters in the graph, or in the
            // executable, before refusing: the old ones are written back to both, or, where
            // that fails too, no replay runs the graph again.
            if let Err(lost) = self.write_node(node) {
                self.exec.broken_by(lost).map_err(driver)?;
            }
            return Err(driver(e));
        }
        Ok(())
    }

    /// Gives the driver node `node`'s parameters, in the graph and in its executable, and
    /// switches it on or off there as its launch skips or not.
    fn write_node(&mut self, node: usize) -> Result<(), DriverError> {
        let (work, handle) = (&self.nodes[node].work, self.nodes[node].handle);
        work.with_params(|p| self.exec.set(handle, p))?;
        match work {
            Work::Kernel(k) => self.exec.set_enabled(handle, !k.launch.skip),
            Work::Memory(_) => Ok(()),
        }
    }

    /// The tensors of node `node`, as it was given them: for a node a generated stub
    /// added, the handles of the tensors it bound (read one back with
    /// [`Graph::to_host`], or pass them to [`Graph::update`] with new params).
    pub fn args(&self, node: usize) -> Result<&[GraphArg], Error> {
        self.nodes
            .get(node)
            .map(|n| &n.args[..])
            .ok_or_else(|| no_node(node, self.nodes.len()))
    }

    /// Whether node `node` may start before the node ahead of it has finished: joined to it
    /// by a programmatic edge (the module documentation, "Programmatic edges").
    pub fn starts_early(&self, node: usize) -> Result<bool, Error> {
        self.nodes
            .get(node)
            .map(|n| n.programmatic)
            .ok_or_else(|| no_node(node, self.nodes.len()))
    }

    /// Sync mode: each replay runs the nodes one by one, each with exactly its
    /// parameters, and waits after each, so that a fault names its node. On when a
    /// kernel launched into the graph had sync mode on.
    pub fn set_sync(&mut self, on: bool) {
        self.sync = on;
    }

    /// Replays the graph on `stream` (of the graph's context), after the pending work on
    /// its tensors. Returns a report an earlier replay left instead of replaying; waits
    /// for the graph when a node is in [`CheckedMode::Wait`] or in sync mode, and then
    /// returns what it found.
    pub fn replay(&mut self, stream: &Arc<CudaStream>) -> Result<(), Error> {
        let (graph, other) = (
            DeviceId::of(self.stream.context()),
            DeviceId::of(stream.context()),
        );
        if graph != other {
            return Err(Error::GraphUsage {
                what: "replaying a graph".into(),
                reason: format!("the stream is on {other}, but the graph was made on {graph}"),
            });
        }
        self.report_raised(true)?;
        // The driver orders replays of one executable only: one on another stream after a
        // node was added (a new executable), or a sync-mode one, would not wait. Each waits
        // for the one before, so that `done` covers them all (the records are read, and
        // freed, after it).
        stream.wait(&self.done).map_err(|e| self.fault(e))?;
        if self.sync {
            return self.replay_alone(stream);
        }
        let disabled = self
            .nodes
            .iter()
            .filter(|n| n.work.skip())
            .map(|n| n.handle);
        self.exec.instantiate(disabled).map_err(|e| self.fault(e))?;
        let guards = self.bound.order(stream);
        let launched = self.exec.launch(stream);
        // Records the replay as the latest read or write of each tensor.
        drop(guards);
        launched
            .and_then(|()| self.done.record(stream))
            .map_err(|e| self.fault(e))?;
        if self
            .nodes
            .iter()
            .any(|n| n.work.mode() == CheckedMode::Wait)
        {
            self.done.synchronize().map_err(|e| self.fault(e))?;
            self.report_raised(false)?;
        }
        Ok(())
    }

    /// Waits for the last replay and returns the first violation a node's record holds
    /// (node order), as deferred.
    pub fn check(&mut self) -> Result<(), Error> {
        self.done.synchronize().map_err(|e| self.fault(e))?;
        self.report_raised(true)
    }

    /// The elements of a tensor bound into this graph, copied to the host on `stream` in
    /// row-major order of its shape, after its pending writes (a replay's included).
    pub fn to_host<T: Element>(
        &self,
        tensor: GraphArg,
        stream: &Arc<CudaStream>,
    ) -> Result<Vec<T>, Error> {
        self.bound.to_host(tensor, stream)
    }

    /// Nodes in the graph.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// A sync-mode replay: each node's work alone, waited for, on `stream`.
    fn replay_alone(&mut self, stream: &Arc<CudaStream>) -> Result<(), Error> {
        // Where the replay stopped: a node's fault, or its record's report.
        let mut stopped = None;
        let guards = self.bound.order(stream);
        for (i, n) in self.nodes.iter_mut().enumerate() {
            if n.work.skip() {
                continue;
            }
            let ran = n
                .work
                .run_alone(stream)
                .and_then(|()| stream.synchronize())
                .and_then(|()| stream.context().check_err());
            if let Err(fault) = ran {
                stopped = Some((i, Err(fault)));
                break;
            }
            if let Work::Kernel(k) = &mut n.work
                && let Some(record) = k.record.as_mut()
                && record.raised()
            {
                stopped = Some((i, Ok(k.kernel.report(record.take(), false))));
                break;
            }
        }
        drop(guards);
        let (i, error) = match stopped {
            // A fault leaves the context unusable: recording `done` would fail too and hide
            // the node, so the fault is reported as it is.
            Some((i, Err(error))) => (i, error),
            stopped => {
                self.done.record(stream).map_err(|e| self.fault(e))?;
                return match stopped {
                    Some((i, Ok(report))) => report.map_err(self.nodes[i].error(i)),
                    _ => Ok(()),
                };
            }
        };
        let n = &self.nodes[i];
        let source = match &n.work {
            Work::Kernel(k) => {
                let c = k.kernel.contract();
                let metas: SmallVec<[TensorMeta<'_>; ARGS]> =
                    n.args.iter().filter_map(|a| self.bound.meta(a)).collect();
                Error::KernelFault {
                    kernel: c.name,
                    shapes: describe(c, &metas, &k.params),
                    error,
                }
            }
            Work::Memory(m) => {
                Error::driver(format!("running the graph's {} node", m.name()))(error)
            }
        };
        Err(n.error(i)(source))
    }

    /// Reports the first raised record, in node order, once the last replay is done.
    fn report_raised(&mut self, deferred: bool) -> Result<(), Error> {
        let raised = |n: &Node<'_>| n.work.record().is_some_and(|r| r.raised());
        let Some(i) = self.nodes.iter().position(raised) else {
            return Ok(());
        };
        // The kernel that raised the flag may still be running, and so may others of its
        // replay that write the record: wait for the replay before reading it.
        self.done.synchronize().map_err(|e| self.fault(e))?;
        let n = &mut self.nodes[i];
        let error = n.error(i);
        match &mut n.work {
            Work::Kernel(KernelWork {
                kernel,
                record: Some(record),
                ..
            }) => kernel.report(record.take(), deferred).map_err(error),
            _ => Ok(()),
        }
    }

    /// Adds `work` on `args`, checked, as the graph's next node, after the others: by a
    /// programmatic edge where it may start before the node ahead has finished
    /// (early.rs), else by an ordinary one.
    fn push(&mut self, args: &[GraphArg], work: Work<'a>) -> Result<usize, Error> {
        let index = self.nodes.len();
        let after = self.nodes.last().map(|n| n.handle);
        let name = work.name();
        let in_node = self.new_node_error(name);
        let handle = work
            .with_params(|p| self.exec.add(after, p))
            .map_err(|e| in_node(Error::driver(format!("adding {name} to a graph"))(e)))?;
        self.nodes.push(Node {
            args: args.into(),
            work,
            handle,
            programmatic: false,
        });
        // A driver that refuses the programmatic edge leaves the ordinary one (retype puts
        // it back): the node then runs in order, only without the overlap.
        if let Some(from) = after
            && early::may_start_early(&self.bound, &self.nodes, index)
            && self.exec.retype(from, handle, true).is_ok()
        {
            self.nodes[index].programmatic = true;
        }
        Ok(index)
    }

    /// Makes ordinary the programmatic edges into node `from` and the nodes after it that
    /// an update of node `from` has made unsafe (early.rs), for the graph's life.
    fn ordinary_edges_after_update(&mut self, from: usize) -> Result<(), DriverError> {
        for j in from..self.nodes.len() {
            if self.nodes[j].programmatic && !early::may_start_early(&self.bound, &self.nodes, j) {
                self.exec
                    .retype(self.nodes[j - 1].handle, self.nodes[j].handle, false)?;
                self.nodes[j].programmatic = false;
            }
        }
        Ok(())
    }

    /// The error of the node `name` would become, the graph's next.
    fn new_node_error(&self, name: &'static str) -> impl Fn(Error) -> Error + Copy + use<> {
        let node = self.nodes.len();
        move |source| Error::InGraph {
            node,
            kernel: name,
            source: Box::new(source),
        }
    }

    /// The device of the graph's context, where every tensor of a copy or fill must be.
    fn device(&self) -> DeviceId {
        DeviceId::of(self.stream.context())
    }

    /// A replay's fault, for the whole graph.
    fn fault(&self, error: DriverError) -> Error {
        let names: Vec<&str> = self.nodes.iter().map(|n| n.work.name()).collect();
        Error::GraphFault {
            kernels: format!("{} nodes ({})", names.len(), names.join(", ")),
            error,
        }
    }
}

/// The error of a node index past a graph's `nodes` nodes.
fn no_node(node: usize, nodes: usize) -> Error {
    Error::GraphUsage {
        what: format!("graph node {node}"),
        reason: format!("the graph has {nodes} nodes"),
    }
}

impl Drop for Graph<'_> {
    fn drop(&mut self) {
        // The last replay may still write the nodes' records, which are freed next, and
        // the driver destroys the executable only once it is done. Errors have nowhere
        // to go from a drop; the context records them.
        let ctx = self.stream.context();
        ctx.record_err(self.done.synchronize());
    }
}
