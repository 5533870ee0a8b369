//! Reads the SASS of imac's kernels, as `cuobjdump -sass` prints it, and counts the round
//! trips to memory a thread waits for one after another: before its first loop, in one pass
//! of each loop, and on its way to an exit.
//!
//! A kernel that streams memory is as fast as the number of times its warps wait for a
//! load's value: a prologue whose loads depend on each other, or a loop whose loads are
//! issued in two batches because a value was used between them, waits once more a block or
//! a pass. Those waits are read off the SASS (ptxas decides the order, not the source), so
//! `scripts/ptxas-report` keeps each example spec's counts in `tests/out/round-trips.txt`
//! beside its registers, and a change that adds a wait shows in review without a GPU.
//!
//! [`instruction`] reads one line, [`listing`] a whole listing (cuobjdump's or nvdisasm's,
//! with its source lines), [`mod@cfg`] finds its blocks and loops, [`mod@round_trips`] counts,
//! and [`mod@explain`] puts the counts in words. `imac waits` runs them on a spec's kernels, with spec lines.

pub mod cfg;
pub mod explain;
pub mod instruction;
pub mod listing;
pub mod round_trips;

pub use explain::explain;
pub use instruction::{Effect, Instruction, ParseError, Reg};
pub use listing::{Function, Location, functions};
pub use round_trips::{Loop, RoundTrips, Wait, round_trips, round_trips_ignoring};
