//! A function's round trips in words: its counts, then, for the path from the entry and
//! each loop's pass, every instruction at which the time grows and the load it waited for,
//! each named by the caller (by address, or by source line). Waits in a row at the same
//! places are written once, with their times (`1 to 4`).

use std::fmt::Write;

use crate::round_trips::{RoundTrips, Wait};

/// Writes `counts` under `title`, naming an instruction by `place(addr)` and a loop by
/// `head(addr)` of its head.
pub fn explain(
    title: &str,
    counts: &RoundTrips,
    place: &dyn Fn(u32) -> String,
    head: &dyn Fn(u32) -> String,
) -> String {
    let mut out = match counts.to_first_loop {
        Some(n) => format!(
            "{title}: {n} round trip(s) before its first loop, {} to an exit\n",
            counts.to_exit
        ),
        None => format!(
            "{title}: {} round trip(s) to an exit, no loop\n",
            counts.to_exit
        ),
    };
    if !counts.waits.is_empty() {
        out += "  from the entry:\n";
        waits(&mut out, &counts.waits, place);
    }
    // Loops whose pass waits for nothing are only counted.
    let (waiting, idle): (Vec<_>, Vec<_>) = counts.loops.iter().partition(|l| !l.waits.is_empty());
    for l in waiting {
        let _ = writeln!(
            out,
            "  loop at {}: {} round trip(s) a pass",
            head(l.head),
            l.per_pass
        );
        waits(&mut out, &l.waits, place);
    }
    if !idle.is_empty() {
        let _ = writeln!(
            out,
            "  and {} loop(s) whose pass waits for no load",
            idle.len()
        );
    }
    for &a in &counts.indirect {
        let _ = writeln!(
            out,
            "  a jump table at {}, whose targets are not followed",
            place(a)
        );
    }
    out
}

fn waits(out: &mut String, waits: &[Wait], place: &dyn Fn(u32) -> String) {
    let lines: Vec<(u32, String)> = waits
        .iter()
        .map(|w| {
            let on = match w.on {
                Some((_, load)) => format!("waits for the load at {}", place(load)),
                None => "waits for its async or bulk copies".to_string(),
            };
            (w.time, format!("{}\n         {on}", place(w.addr)))
        })
        .collect();
    let mut i = 0;
    while i < lines.len() {
        let run = lines[i..]
            .iter()
            .take_while(|(_, w)| *w == lines[i].1)
            .count();
        let (first, last) = (lines[i].0, lines[i + run - 1].0);
        let times = if run == 1 {
            first.to_string()
        } else {
            format!("{first} to {last}")
        };
        let _ = writeln!(out, "    {times}: {}", lines[i].1);
        i += run;
    }
}
