//! Capacities of the lists a launch keeps in place ([`smallvec::SmallVec`]): a launch has a
//! handful of arguments of a few dimensions each, and a program makes hundreds of
//! thousands of launches a second, so one heap allocation per list would cost more than
//! the checks themselves. Past these sizes the lists move to the heap: no contract is
//! limited by them.

// `Kernel::launch`'s documentation quotes ARGS and VALUES.

/// Tensor arguments a launch handles without allocating.
pub(crate) const ARGS: usize = 8;
/// Index values (strides and symbols) a launch handles without allocating.
pub(crate) const VALUES: usize = 32;
/// Dimensions of one tensor handled in place.
pub(crate) const DIMS: usize = 8;
/// Symbols a contract may have before the checker allocates.
pub(crate) const SYMBOLS: usize = 16;
/// Values a kernel receives (pointers, index values, params) that a launch or a graph node
/// holds without allocating: a pointer per argument, the index values, and 8 params.
pub(crate) const ABI_VALUES: usize = ARGS + VALUES + 8;
