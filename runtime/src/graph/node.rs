//! One node of a graph: its tensors and its work, a kernel launch (its kernel and params as
//! captured or last updated, its own violation record, the kernel node's parameters) or a
//! copy or fill ([`Memory`]).

use std::ffi::c_void;
use std::ptr::null_mut;

use cudarc::driver::sys::{self, CUDA_KERNEL_NODE_PARAMS, CUgraphNode};
use cudarc::driver::{CudaStream, DriverError};
use smallvec::SmallVec;

use super::bound::{Bound, GraphArg};
use super::exec::Params;
use super::memory::Memory;
use crate::abi::{AbiValue, AbiValues, abi_values};
use crate::capacity::{ABI_VALUES, ARGS};
use crate::check::TensorMeta;
use crate::checked::CheckedMode;
use crate::contract::Scalar;
use crate::error::Error;
use crate::kernel::Kernel;
use crate::record::Record;

/// Params a node keeps in place.
const PARAMS: usize = 8;

/// A node of a graph.
#[derive(Debug)]
pub(super) struct Node<'a> {
    /// The tensors, as the kernel's contract orders them, or a copy's source and
    /// destination, or the tensor a fill writes.
    pub args: SmallVec<[GraphArg; ARGS]>,
    pub work: Work<'a>,
    pub handle: CUgraphNode,
    /// Joined to the node before by a programmatic edge (crate::graph's early.rs).
    pub programmatic: bool,
}

/// What a node runs.
// A kernel's values are kept in place (crate::capacity) and a copy or fill is a few words:
// the few such nodes of a graph waste a kilobyte each, where boxing would allocate for
// every kernel node.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(super) enum Work<'a> {
    Kernel(KernelWork<'a>),
    Memory(Memory),
}

/// A checked launch of a kernel.
#[derive(Debug)]
pub(super) struct KernelWork<'a> {
    pub kernel: &'a Kernel,
    pub params: SmallVec<[Scalar; PARAMS]>,
    /// The kernel's checked mode when the node was captured: an update keeps it.
    pub mode: CheckedMode,
    /// The node's own record, where its entry point takes one: replays reuse it, and no
    /// other node or direct launch of the kernel writes it, so a report names this node.
    pub record: Option<Record>,
    pub launch: NodeLaunch,
}

impl Node<'_> {
    /// The error of this node, `index` in its graph.
    pub(super) fn error(&self, index: usize) -> impl FnOnce(Error) -> Error + use<> {
        let kernel = self.work.name();
        move |source| Error::InGraph {
            node: index,
            kernel,
            source: Box::new(source),
        }
    }
}

/// What an update gives a node, checked: a kernel node's launch and params, or a copy's or
/// fill's new memory ([`Work::swap`]). Short-lived, one at a time: kept in place as `Work`
/// keeps its kernel's values (the note above it).
#[allow(clippy::large_enum_variant)]
pub(super) enum Update {
    Kernel(NodeLaunch, SmallVec<[Scalar; PARAMS]>),
    Memory(Memory),
}

impl Work<'_> {
    /// Puts `update` in place of what it replaces, which it returns, as an update that
    /// would put it back: a node keeps its kernel, mode and record.
    pub(super) fn swap(&mut self, update: Update) -> Update {
        match (self, update) {
            (Work::Kernel(k), Update::Kernel(launch, params)) => Update::Kernel(
                std::mem::replace(&mut k.launch, launch),
                std::mem::replace(&mut k.params, params),
            ),
            (Work::Memory(m), Update::Memory(memory)) => {
                Update::Memory(std::mem::replace(m, memory))
            }
            // Never: an update is made from the node's own kind.
            (_, update) => update,
        }
    }

    /// The node's name in reports: its kernel's, or `copy` or `zero`.
    pub(super) fn name(&self) -> &'static str {
        match self {
            Work::Kernel(k) => k.kernel.contract().name,
            Work::Memory(m) => m.name(),
        }
    }

    /// The node is switched off: a kernel launch whose domain is empty.
    pub(super) fn skip(&self) -> bool {
        matches!(self, Work::Kernel(k) if k.launch.skip)
    }

    /// The node's violation record, if its kernel's entry point takes one.
    pub(super) fn record(&self) -> Option<&Record> {
        match self {
            Work::Kernel(k) => k.record.as_ref(),
            Work::Memory(_) => None,
        }
    }

    /// The node's checked mode; `Off` for a copy or fill.
    pub(super) fn mode(&self) -> CheckedMode {
        match self {
            Work::Kernel(k) => k.mode,
            Work::Memory(_) => CheckedMode::Off,
        }
    }

    /// Calls `f` with the node's parameters, as the driver takes them.
    pub(super) fn with_params<R>(&self, f: impl FnOnce(Params<'_>) -> R) -> R {
        match self {
            Work::Kernel(k) => k.launch.with_params(f),
            Work::Memory(m) => m.with_params(f),
        }
    }

    /// Runs the node's work alone on `stream`, with exactly its parameters: how a
    /// sync-mode replay runs it.
    pub(super) fn run_alone(&self, stream: &CudaStream) -> Result<(), DriverError> {
        match self {
            Work::Kernel(k) => k.launch.launch_alone(stream),
            Work::Memory(m) => m.run_alone(stream),
        }
    }
}

/// What a kernel node runs: the entry point, the launch configuration and every value the
/// kernel receives, the record's address last.
#[derive(Debug)]
pub(super) struct NodeLaunch {
    func: sys::CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: u32,
    values: AbiValues,
    /// A `resident` or `persistent` launch: the node is cooperative, every block at once.
    cooperative: bool,
    /// The launch domain is empty and the contract says skip: the node stays in the graph
    /// (an update may give it work again) but is switched off.
    pub skip: bool,
}

impl NodeLaunch {
    /// Checks a launch of `kernel` on the tensors `args` name in `bound` with `params`,
    /// against the limits and entry points of `mode`, as [`Kernel::launch`] does (the
    /// kernel's plan memo included: a pure function's cache, which a node shares safely).
    pub(super) fn prepare(
        kernel: &Kernel,
        stream: &CudaStream,
        bound: &Bound<'_>,
        args: &[GraphArg],
        params: &[Scalar],
        mode: CheckedMode,
    ) -> Result<NodeLaunch, Error> {
        let c = kernel.contract();
        let metas = args
            .iter()
            .enumerate()
            .map(|(i, a)| {
                bound.meta(a).ok_or_else(|| Error::GraphUsage {
                    what: format!(
                        "kernel {}, argument {}",
                        c.name,
                        c.args.get(i).map_or("past the contract's", |a| a.name)
                    ),
                    reason: "the tensor was bound into another graph (a GraphArg belongs to \
                             the graph whose read, write or bind made it)"
                        .into(),
                })
            })
            .collect::<Result<SmallVec<[TensorMeta<'_>; ARGS]>, Error>>()?;
        let writable = |i: usize| args.get(i).is_some_and(|&a| bound.writable(a));
        let checked = mode != CheckedMode::Off;
        let plan = kernel.check(stream, writable, &metas, params, checked)?;
        let values = abi_values(c, &plan, &metas, params)?;
        let (func, grid) = kernel.entry(&plan, checked)?;
        let func = func.cu_function();
        Ok(NodeLaunch {
            func,
            // A switched-off node still needs a valid configuration.
            grid: if plan.skip { [1; 3] } else { grid },
            block: plan.block,
            shared_bytes: plan.shared_bytes,
            values,
            cooperative: kernel.cooperative(),
            skip: plan.skip,
        })
    }

    /// The launch with the node's record, the entry point's last parameter where it takes
    /// one.
    pub(super) fn with_record(mut self, record: Option<&Record>) -> Self {
        if let Some(record) = record {
            self.values.push(AbiValue::Ptr(record.address()));
        }
        self
    }

    /// Calls `f` with the kernel node's parameters, which point into `self` (the driver
    /// copies them, and the values, during a graph call).
    pub(super) fn with_params<R>(&self, f: impl FnOnce(Params<'_>) -> R) -> R {
        let mut pointers = self.pointers();
        let [gx, gy, gz] = self.grid;
        let [bx, by, bz] = self.block;
        let params = CUDA_KERNEL_NODE_PARAMS {
            func: self.func,
            gridDimX: gx,
            gridDimY: gy,
            gridDimZ: gz,
            blockDimX: bx,
            blockDimY: by,
            blockDimZ: bz,
            sharedMemBytes: self.shared_bytes,
            kernelParams: pointers.as_mut_ptr(),
            extra: null_mut(),
            // Null: the node runs `func`, in the current context.
            kern: null_mut(),
            ctx: null_mut(),
        };
        f(Params::Kernel {
            params: &params,
            cooperative: self.cooperative,
        })
    }

    /// Launches the node's kernel directly on `stream`, with exactly the node's
    /// parameters: how a sync-mode replay runs each node alone.
    pub(super) fn launch_alone(&self, stream: &CudaStream) -> Result<(), DriverError> {
        stream.context().bind_to_thread()?;
        let mut pointers = self.pointers();
        let [gx, gy, gz] = self.grid;
        let [bx, by, bz] = self.block;
        let (f, bytes, s, p) = (
            self.func,
            self.shared_bytes,
            stream.cu_stream(),
            pointers.as_mut_ptr(),
        );
        // SAFETY: the parameters passed the kernel's checks (a cooperative grid's fit on the
        // device included) when the node was captured or last updated, and the tensors they
        // point into are borrowed by the graph.
        unsafe {
            if self.cooperative {
                sys::cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, bytes, s, p)
            } else {
                sys::cuLaunchKernel(f, gx, gy, gz, bx, by, bz, bytes, s, p, null_mut())
            }
        }
        .result()
    }

    /// One pointer per value, for `kernelParams`.
    fn pointers(&self) -> SmallVec<[*mut c_void; ABI_VALUES]> {
        self.values.iter().map(AbiValue::param_ptr).collect()
    }
}
