//! Act-order group indices.

use super::error::QuantError;
use super::spec::ceil_div;

/// Checks an act-order `g_idx` for a weight of `k` rows and group size `group`: one entry
/// per row, each in `0..ceil(k/group)`. The error names the first bad row, its value and
/// the valid range. A `group` outside `1..=k` is itself an error.
pub fn validate_g_idx(g_idx: &[i32], k: usize, group: usize) -> Result<(), QuantError> {
    if group == 0 || group > k {
        return Err(QuantError::Group { group, k });
    }
    if g_idx.len() != k {
        return Err(QuantError::GIdxLen {
            k,
            actual: g_idx.len(),
        });
    }
    let groups = ceil_div(k, group);
    match g_idx
        .iter()
        .position(|&g| usize::try_from(g).map_or(true, |g| g >= groups))
    {
        None => Ok(()),
        Some(row) => Err(QuantError::GIdxValue {
            row,
            value: g_idx[row],
            groups,
            k,
            group,
        }),
    }
}
