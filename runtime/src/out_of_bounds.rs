//! [`OutOfBounds`]: an out-of-bounds access of a checked launch, as
//! [`crate::Error::OutOfBounds`] carries it. Plain report data, made from a checked entry
//! point's record in checked.rs, so that the error type depends on no launch machinery.

use std::fmt;

/// What the access that broke the bounds was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    /// A 16-byte vector access (`load8`, `store8`) whose last index is no multiple of its
    /// width.
    MisalignedVector,
    /// A quantized tile taken as whole (`load_whole_tile`) that lies inside K and N but is
    /// not whole: across a group, or partial. Its index is the tile's first row and column.
    NotWholeTile,
    /// A shared array's `tile(...)` whose shape is not its last two dimensions (the
    /// columns its last extent, the rows at most the one before). Its index is the tile's
    /// rows and columns, its extent the array's.
    TileShape,
    /// A chunk of a shared tile outside the tile, or not at a 16-byte chunk. Its index is
    /// the row and column, its extent the tile's rows and columns.
    TileChunk,
    /// A shared array of another block of the cluster (`s.in_block(rank)`) whose rank lies
    /// outside the cluster. Its index is the rank, its extent the cluster's blocks.
    ClusterRank,
    /// A read or write, in a kernel that starts early (docs/programmatic-launch.md), of an
    /// argument that is not `early`, before the thread called `ima_wait_for_inputs()`:
    /// the kernel ahead may still be writing it. Its index is the access's.
    BeforeWait {
        write: bool,
    },
}

/// An out-of-bounds access of a checked launch (the latest one made by the first thread
/// to finish with one), and how many there were. The access was skipped (a read gave 0),
/// so the CUDA context is healthy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfBounds {
    pub kernel: &'static str,
    pub signature: &'static str,
    /// `k`, `w.g_idx` or `shared tile`.
    pub arg: String,
    pub access: Access,
    /// Each dimension's extent as the spec writes it (`T`, `ceil(K / G)`).
    pub dims: Vec<&'static str>,
    pub index: Vec<i64>,
    pub extent: Vec<i64>,
    /// The first dimension out of range.
    pub failed_dim: usize,
    pub block: [u32; 3],
    pub thread: [u32; 3],
    /// Every violation of the launch, counted; of the launches since the last report when
    /// `deferred`.
    pub count: u32,
    /// Made by an earlier launch in [`CheckedMode::Deferred`](crate::CheckedMode), and
    /// reported by a later one or by `check_deferred`.
    pub deferred: bool,
}

impl fmt::Display for OutOfBounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.failed_dim;
        let (dim, i, e) = (
            self.dims.get(d).copied().unwrap_or("?"),
            self.index.get(d).copied().unwrap_or_default(),
            self.extent.get(d).copied().unwrap_or_default(),
        );
        // The three tile reports hold two numbers each: a row and a column (of a tile's
        // origin, shape or chunk) against two extents.
        let at = |v: &[i64], k: usize| v.get(k).copied().unwrap_or_default();
        let (r, c) = (at(&self.index, 0), at(&self.index, 1));
        let (er, ec) = (at(&self.extent, 0), at(&self.extent, 1));
        // The index, each dimension by its name: `B:3, H:1`.
        let indexed: Vec<String> = self
            .dims
            .iter()
            .zip(&self.index)
            .map(|(n, i)| format!("{n}:{i}"))
            .collect();
        let indexed = indexed.join(", ");
        match self.access {
            Access::NotWholeTile => write!(
                f,
                "{}: load_whole_tile of {} at row k = {r}, column n = {c}: not one of the whole tiles (inside K = {er} and N = {ec}, in one group)",
                self.kernel, self.arg,
            )?,
            Access::TileShape => write!(
                f,
                "{}: tile of {r} x {c} of {}: its last two dimensions are {er} x {ec} (the columns must be the last extent, the rows at most the one before)",
                self.kernel, self.arg,
            )?,
            Access::TileChunk => write!(
                f,
                "{}: chunk at row {r}, column {c} of a {er} x {ec} tile of {}: outside the tile, or not at a multiple of 16 bytes",
                self.kernel, self.arg,
            )?,
            Access::ClusterRank => write!(
                f,
                "{}: {} of block {r} of the cluster: the cluster has {er} blocks (ranks 0 to {})",
                self.kernel,
                self.arg,
                er.saturating_sub(1),
            )?,
            Access::BeforeWait { write } => write!(
                f,
                "{}: {} of {}[{indexed}] before ima_wait_for_inputs(): the kernel starts early, and only its `early` arguments may be read before it waits for the kernel ahead (which may still write this one)",
                self.kernel,
                if write { "write" } else { "read" },
                self.arg,
            )?,
            Access::MisalignedVector => write!(
                f,
                "{}: misaligned vector access of {}: the last index {} is no multiple of the vector width",
                self.kernel,
                self.arg,
                self.index.last().copied().unwrap_or_default()
            )?,
            access => {
                let verb = if access == Access::Write {
                    "write"
                } else {
                    "read"
                };
                let why = if i < 0 {
                    format!("{i} < 0")
                } else {
                    format!("{i} >= {dim} = {e}")
                };
                write!(
                    f,
                    "{}: out-of-bounds {verb} of {}[{indexed}]: index {d} is {why}",
                    self.kernel, self.arg,
                )?;
            }
        }
        let [bx, by, bz] = self.block;
        let [tx, ty, tz] = self.thread;
        write!(
            f,
            " (block ({bx},{by},{bz}), thread ({tx},{ty},{tz})); 1 of {} violation{}{}\n  in {}",
            self.count,
            if self.count == 1 { "" } else { "s" },
            if self.deferred {
                " in the checked launches since the last report (deferred)"
            } else {
                ""
            },
            self.signature
        )
    }
}
