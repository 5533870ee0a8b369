//! A function's round trips in words: for the path from the entry and each loop's pass,
//! every instruction at which the time grows, the register it waited for and the load that
//! wrote it, each placed by the caller (an address, a source line).

use std::fmt::Write;

use crate::listing::Function;
use crate::round_trips::{RoundTrips, Wait};

/// Writes `counts` of `function`, naming each instruction by `place(addr)`.
pub fn explain(function: &Function, counts: &RoundTrips, place: &dyn Fn(u32) -> String) -> String {
    let mut out = format!(
        "{}: {} round trip(s) to an exit",
        function.name, counts.to_exit
    );
    if let Some(first) = counts.to_first_loop {
        let _ = write!(out, ", {first} before its first loop");
    }
    out.push('\n');
    let waits = |out: &mut String, waits: &[Wait]| {
        for w in waits {
            let on = match w.on {
                Some((reg, load)) => format!("{reg}, loaded at {}", place(load)),
                None => "its async or bulk copies".to_string(),
            };
            let _ = writeln!(out, "    {} waits for {on}: {}", place(w.addr), w.time);
        }
    };
    waits(&mut out, &counts.waits);
    for l in &counts.loops {
        let _ = writeln!(out, "  loop at {}: {} a pass", place(l.head), l.per_pass);
        waits(&mut out, &l.waits);
    }
    for &a in &counts.indirect {
        let _ = writeln!(out, "  a jump table at {}, not followed", place(a));
    }
    out
}
