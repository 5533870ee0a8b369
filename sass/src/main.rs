//! `ima-round-trips [LABEL] < LISTING` prints one row a function of a `cuobjdump -sass` or
//! `nvdisasm -c [-g]` listing: the label (the file it came from), the function, its round
//! trips to the first loop's head (`-` without a loop) and to an exit, and one pass of each
//! loop in the order of their heads. A function that reaches a jump table whose targets the
//! listing does not name (cuobjdump's does not) is marked: those are not followed.
//!
//! `ima-round-trips --explain FUNCTION < LISTING` prints, for the entry's path and each
//! loop's pass, every instruction at which the time grows and the load it waited for (with
//! source lines from an `nvdisasm -g` listing).

use std::io::Read;
use std::process::ExitCode;

use ima_sass::{Function, RoundTrips};

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
            let counts = ima_sass::round_trips(function);
            let place = |addr| place(function, addr);
            print!(
                "{}",
                ima_sass::explain(&function.name, &counts, &place, &place)
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

/// An instruction's address, opcode and source line, where the listing has one.
fn place(function: &Function, addr: u32) -> String {
    let opcode = function
        .instructions
        .iter()
        .find(|i| i.addr == addr)
        .map_or("?", |i| i.opcode.as_str());
    match function.location(addr) {
        Some(l) => {
            let frames: Vec<String> = l.frames.iter().map(|(f, n)| format!("{f}:{n}")).collect();
            format!("{addr:#06x} {opcode} ({})", frames.join(" < "))
        }
        None => format!("{addr:#06x} {opcode}"),
    }
}
