//! A contract's arguments by name, and the host validation of one argument's entries
//! (`ima::validate_values`) as the value-contract tests read it.

use ima::{Error, IndexValue, KernelContract, Scalar, validate_values};

/// The index of `c`'s argument `name` (a quantized argument's buffers as `w.qweight`).
pub fn arg(c: &KernelContract, name: &str) -> usize {
    c.args
        .iter()
        .position(|a| a.name == name)
        .unwrap_or_else(|| panic!("{} has no argument {name}", c.name))
}

/// validate_values on `c`'s argument `name`: Ok, or the first bad entry's report; any
/// other error fails the test.
pub fn validate(
    c: &KernelContract,
    name: &str,
    shape: &[usize],
    entries: &[i64],
    symbols: &[i64],
    params: &[Scalar],
) -> Result<(), Box<IndexValue>> {
    match validate_values(c, arg(c, name), shape, entries, symbols, params) {
        Ok(()) => Ok(()),
        Err(Error::IndexValue(r)) => Err(r),
        Err(e) => panic!("{}: {name}: expected an IndexValue error, got {e}", c.name),
    }
}
