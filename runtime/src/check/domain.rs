//! The launch domain: what the grid covers, how many blocks it takes, and whether it is
//! empty, for each [`Launch`] form.

use super::TensorMeta;
use super::values::Env;
use crate::capacity::DIMS;
use crate::contract::{KernelContract, Launch, physical};
use crate::device::DeviceLimits;
use crate::layout;
use crate::violation::Violation;
use smallvec::SmallVec;

/// Threads one grid may have. The kernels are grid-stride (or block-stride) loops that
/// compute `idx + gridDim.x * blockDim.x` in the entry point's index type, so a 32-bit
/// launch is safe only while `numel + threads` stays below `i32::MAX`; capping the grid at
/// 2^24 threads makes that headroom fixed. No GPU holds more threads at once (an H200
/// holds 132 x 2048 = 270,336), so a larger grid would buy nothing; 64-bit launches use
/// the same cap. Raw [`Launch::Grid`] launches are not capped: their grid is the spec's.
pub const GRID_THREADS: u64 = 1 << 24;

/// The launch domain of one launch.
#[derive(Debug)]
pub(super) struct Domain {
    /// What [`Violation::Empty`] names: the domain argument, or `grid`.
    pub name: &'static str,
    /// Its shape (physical order), or the grid's extents.
    pub shape: SmallVec<[usize; DIMS]>,
    /// Elements of the domain argument, or threads of a raw grid (saturating).
    pub numel: u64,
    /// Blocks along x, y, z; 0 somewhere when the domain is empty.
    pub grid: [u32; 3],
}

/// The domain of `c`'s launch, `None` where something it needs was already refused
/// (reporting [`Violation::TooLarge`], [`Violation::Grid`], [`Violation::ClusterGrid`] and
/// evaluation errors here).
pub(super) fn domain(
    c: &KernelContract,
    args: &[TensorMeta<'_>],
    ranked: &[bool],
    env: &Env<'_>,
    limits: &DeviceLimits,
    v: &mut Vec<Violation>,
) -> Option<Domain> {
    let threads: u64 = c.block.iter().map(|&b| u64::from(b)).product();
    // Blocks of a grid-stride launch: enough for `needed`, within the caps.
    let strided = |needed: u64| {
        let cap = (GRID_THREADS / threads).max(1);
        needed.min(cap).min(u64::from(limits.grid[0])) as u32
    };
    let d = match c.launch {
        Launch::Threads { arg } | Launch::Blocks { arg, .. } => {
            if !ranked[arg] {
                return None;
            }
            let a = &c.args[arg];
            let shape = args[arg].shape;
            let Some(numel) = layout::numel(shape)
                .map(|n| n as u64)
                .filter(|&n| n <= i64::MAX as u64)
            else {
                v.push(Violation::TooLarge {
                    arg: a.name,
                    shape: shape.to_vec(),
                });
                return None;
            };
            let x = match c.launch {
                Launch::Blocks { outer, .. } => {
                    let outer = (0..outer)
                        .map(|l| shape[physical(a, l)] as u64)
                        .fold(1u64, u64::saturating_mul);
                    strided(outer)
                }
                _ => strided(numel.div_ceil(threads)),
            };
            Domain {
                name: a.name,
                shape: shape.iter().copied().collect(),
                numel,
                grid: [x, 1, 1],
            }
        }
        Launch::Grid { dims, .. } => {
            let mut extents: SmallVec<[i64; 3]> = SmallVec::new();
            for (axis, e) in ["x", "y", "z"].into_iter().zip(dims) {
                match env.eval(e)? {
                    Ok(n) => extents.push(n),
                    Err(error) => {
                        v.push(Violation::Eval {
                            site: "launch grid".into(),
                            text: axis,
                            error,
                            values: env.values_of(e, c),
                        });
                        return None;
                    }
                }
            }
            let outside = extents
                .iter()
                .zip(limits.grid)
                .any(|(&n, limit)| n < 0 || n > i64::from(limit));
            if outside {
                v.push(Violation::Grid {
                    grid: extents.to_vec(),
                    limit: limits.grid,
                });
                return None;
            }
            let mut grid = [1u32; 3];
            for (g, &n) in grid.iter_mut().zip(extents.iter()) {
                *g = n as u32; // within the device's u32 limit, checked above
            }
            if let Some(cluster) = c.launch.cluster()
                && grid.iter().zip(cluster).any(|(&g, c)| g % c != 0)
            {
                v.push(Violation::ClusterGrid { grid, cluster });
                return None;
            }
            let blocks: u128 = grid.iter().map(|&g| u128::from(g)).product();
            Domain {
                name: "grid",
                shape: extents.iter().map(|&n| n as usize).collect(),
                numel: (blocks * u128::from(threads)).min(u128::from(u64::MAX)) as u64,
                grid,
            }
        }
    };
    if d.numel > 0 && d.grid.contains(&0) {
        // Only a device reporting a grid limit of 0 gets here.
        v.push(Violation::Grid {
            grid: d.grid.iter().map(|&g| i64::from(g)).collect(),
            limit: limits.grid,
        });
        return None;
    }
    Some(d)
}
