//! `ima-round-trips [LABEL] < LISTING` prints one row a function of a `cuobjdump -sass`
//! listing: the label (the file it came from), the function, its round trips to the first
//! loop's head (`-` without a loop) and to an exit, and one pass of each loop in the order
//! of their heads. A function that reaches a jump table is marked: its targets are not
//! followed.
//!
//! `ima-round-trips --explain FUNCTION < LISTING` prints, for the entry's path and each
//! loop's pass, every instruction at which the time grows and the register it waited for.

use std::collections::HashMap;
use std::io::Read;
use std::process::ExitCode;

use ima_sass::{Function, Instruction, RoundTrips, Wait};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (explain, label) = match args.as_slice() {
        [flag, name] if flag == "--explain" => (Some(name.as_str()), ""),
        [label] if !label.starts_with('-') => (None, label.as_str()),
        [] => (None, ""),
        _ => {
            eprintln!(
                "usage: ima-round-trips [LABEL] < LISTING\n       ima-round-trips --explain FUNCTION < LISTING"
            );
            return ExitCode::from(2);
        }
    };
    let mut listing = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut listing) {
        eprintln!("ima-round-trips: reading the listing from stdin: {e}");
        return ExitCode::from(2);
    }
    let functions = match ima_sass::functions(&listing) {
        Ok(f) if !f.is_empty() => f,
        Ok(_) => {
            eprintln!(
                "ima-round-trips: no `Function :` header in the listing on stdin (cuobjdump -sass prints them)"
            );
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("ima-round-trips: {e}");
            return ExitCode::from(2);
        }
    };
    match explain {
        None => {
            for function in &functions {
                println!(
                    "{}",
                    row(label, &function.name, &ima_sass::round_trips(function))
                );
            }
        }
        Some(name) => {
            let Some(function) = functions.iter().find(|f| f.name == name) else {
                let names: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
                eprintln!(
                    "ima-round-trips: no function `{name}` in the listing; it has {}",
                    names.join(", ")
                );
                return ExitCode::from(2);
            };
            print!(
                "{}",
                explanation(function, &ima_sass::round_trips(function))
            );
        }
    }
    ExitCode::SUCCESS
}

fn row(label: &str, name: &str, counts: &RoundTrips) -> String {
    let first = counts
        .to_first_loop
        .map_or("-".to_string(), |n| n.to_string());
    let loops: Vec<String> = counts
        .loops
        .iter()
        .map(|l| l.per_pass.to_string())
        .collect();
    let jump_table = if counts.indirect.is_empty() {
        ""
    } else {
        " (jump table not followed)"
    };
    format!(
        "{label:<30} {name:<42} {first:>5} {:>5}  {}{jump_table}",
        counts.to_exit,
        loops.join(" ")
    )
}

fn explanation(function: &Function, counts: &RoundTrips) -> String {
    let at: HashMap<u32, &Instruction> =
        function.instructions.iter().map(|i| (i.addr, i)).collect();
    let waits = |waits: &[Wait]| -> String {
        waits
            .iter()
            .map(|w| {
                let opcode = at.get(&w.addr).map_or("?", |i| i.opcode.as_str());
                let on =
                    w.on.map_or("its async or bulk copies".to_string(), |r| r.to_string());
                format!(
                    "    {:#06x} {opcode:<28} waits for {on}: {}\n",
                    w.addr, w.time
                )
            })
            .collect()
    };
    let mut out = format!(
        "{}: from the entry, {} to an exit",
        function.name, counts.to_exit
    );
    if let Some(first) = counts.to_first_loop {
        out += &format!(", {first} to the first loop's head");
    }
    out += "\n";
    out += &waits(&counts.waits);
    for l in &counts.loops {
        out += &format!("  loop at {:#06x}: {} a pass\n", l.head, l.per_pass);
        out += &waits(&l.waits);
    }
    for a in &counts.indirect {
        out += &format!("  a jump table at {a:#06x}, not followed\n");
    }
    out
}
