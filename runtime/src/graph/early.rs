//! Which kernel node of a graph may start before the kernel node ahead of it has finished:
//! the nodes joined to the one before by a programmatic edge.
//!
//! Node `j` may where
//!
//! - its kernel starts early ([`Kernel::starts_early`]: `early` arguments, a module with the
//!   wait, a device of sm_90 or later, `IMA_PROGRAMMATIC_LAUNCH` not 0), so its body reads
//!   only its `early` arguments before it waits for the grids ahead, and every thread
//!   waits before it exits;
//! - the node before is a kernel node too (a copy or fill keeps an ordinary edge), and
//!   neither is switched off: an empty node would complete at once, and the node after it
//!   would then start while the kernel before that one still ran;
//! - no node ahead of it writes the buffer under one of its `early` arguments (a kernel's
//!   `out` or `inout` argument, a copy's or fill's destination). Every node ahead counts,
//!   not only the one before: a node that starts early may in turn let the next one start
//!   before its own wait, so several kernels may still run when a node starts.
//!
//! Edges are decided when a node is added, and an update that breaks one of these makes
//! the edge ordinary for the graph's life (crate::graph): a node switched off and on at
//! every step then costs one new instantiation, not one a step.

use super::bound::Bound;
use super::node::{Node, Work};
use crate::graph::GraphArg;
use crate::kernel::Kernel;

/// Whether node `j` of `nodes` may start before node `j - 1` has finished (see the module
/// documentation).
pub(super) fn may_start_early(bound: &Bound<'_>, nodes: &[Node<'_>], j: usize) -> bool {
    let Some((node, ahead)) = nodes[..=j].split_last() else {
        return false;
    };
    let Work::Kernel(k) = &node.work else {
        return false;
    };
    let before = match ahead.last() {
        Some(Node {
            work: before @ Work::Kernel(_),
            ..
        }) => before,
        _ => return false,
    };
    if !k.kernel.starts_early() || k.launch.skip || before.skip() {
        return false;
    }
    let early = early_buffers(bound, k.kernel, &node.args);
    !ahead.iter().any(|n| {
        written(n).any(|a| {
            bound
                .buffer_bytes(a)
                .is_some_and(|w| early.iter().any(|e| e.start < w.end && w.start < e.end))
        })
    })
}

/// The buffers under a kernel node's `early` arguments, as ranges of addresses.
fn early_buffers(
    bound: &Bound<'_>,
    kernel: &Kernel,
    args: &[GraphArg],
) -> Vec<std::ops::Range<u64>> {
    let contract = kernel.contract();
    args.iter()
        .zip(contract.args)
        .filter(|(_, c)| c.early)
        .filter_map(|(&a, _)| bound.buffer_bytes(a))
        .collect()
}

/// The tensors node `n` writes: its kernel's `out` and `inout` arguments, or a copy's or
/// fill's destination (its last).
fn written<'n>(n: &'n Node<'_>) -> impl Iterator<Item = GraphArg> + 'n {
    let writes = move |i: usize| match &n.work {
        Work::Kernel(k) => k
            .kernel
            .contract()
            .args
            .get(i)
            .is_some_and(|c| c.role.writes()),
        Work::Memory(_) => i + 1 == n.args.len(),
    };
    n.args
        .iter()
        .enumerate()
        .filter(move |&(i, _)| writes(i))
        .map(|(_, &a)| a)
}
