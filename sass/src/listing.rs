//! A listing of SASS: its functions, each a name and its instructions in address order,
//! from `cuobjdump -sass` (`Function : NAME` headers, branch targets as addresses) or from
//! `nvdisasm -c` (`.text.NAME:` labels, branch targets as labels), with `nvdisasm -g` or
//! `-gi`'s source lines where the listing has them.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use crate::instruction::{Instruction, ParseError, address};

/// One function of a listing (an entry point, with the subroutines ptxas placed after its
/// exits).
#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub instructions: Vec<Instruction>,
    /// The source line of each instruction that has one, by address (nvdisasm -g).
    pub locations: BTreeMap<u32, Rc<Location>>,
}

impl Function {
    pub fn location(&self, addr: u32) -> Option<&Location> {
        self.locations.get(&addr).map(Rc::as_ref)
    }
}

/// Where an instruction came from: its source line, then, for code inlined into another
/// function, the line of each call it was inlined at, outward (nvdisasm -gi's chain; -g
/// gives the first alone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub frames: Vec<(String, u32)>,
}

/// Splits a listing into its functions and reads each one's instructions.
pub fn functions(listing: &str) -> Result<Vec<Function>, ParseError> {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for line in listing.lines() {
        let trimmed = line.trim();
        let header = trimmed
            .strip_prefix("Function :")
            .map(str::trim)
            .or_else(|| {
                trimmed
                    .strip_prefix(".text.")
                    .and_then(|l| l.strip_suffix(':'))
            });
        match (header, groups.last_mut()) {
            (Some(name), _) => groups.push((name.to_string(), Vec::new())),
            (None, Some((_, lines))) => lines.push(line),
            (None, None) => {
                if Instruction::parse(line)?.is_some() {
                    return Err(ParseError {
                        line: line.to_string(),
                        reason: "an instruction before any `Function :` or `.text.NAME:` header",
                    });
                }
            }
        }
    }
    groups
        .into_iter()
        .map(|(name, lines)| function(name, &lines))
        .collect()
}

fn function(name: String, lines: &[&str]) -> Result<Function, ParseError> {
    // nvdisasm names branch targets by label (`.L_x_12:` on a line of its own, before the
    // instruction it stands for), written `(.L_x_12)` in backquotes where used.
    let mut labels: HashMap<&str, u32> = HashMap::new();
    let mut pending: Vec<&str> = Vec::new();
    for line in lines {
        if let Some(label) = label(line) {
            pending.push(label);
        } else if let Some((addr, _)) = address(line) {
            labels.extend(pending.drain(..).map(|l| (l, addr)));
        }
    }
    let mut instructions = Vec::new();
    let mut locations = BTreeMap::new();
    let mut here: Option<Rc<Location>> = None;
    // `//##` lines come in runs, innermost first: a run after an instruction starts anew.
    let mut run: Vec<(String, u32)> = Vec::new();
    for line in lines {
        if let Some(frame) = frame(line) {
            run.push(frame);
            continue;
        }
        if !run.is_empty() {
            here = Some(Rc::new(Location {
                frames: std::mem::take(&mut run),
            }));
        }
        let resolved = resolve_labels(line, &labels);
        if let Some(i) = Instruction::parse(&resolved)? {
            if let Some(l) = &here {
                locations.insert(i.addr, Rc::clone(l));
            }
            instructions.push(i);
        }
    }
    Ok(Function {
        name,
        instructions,
        locations,
    })
}

/// `.L_x_12:` or `$NAME$_Z...:`, alone on its line.
fn label(line: &str) -> Option<&str> {
    let l = line.trim().strip_suffix(':')?;
    (!l.is_empty()
        && !l.contains(char::is_whitespace)
        && (l.starts_with(".L") || l.starts_with('$')))
    .then_some(l)
}

/// `//## File "specs/index.ima", line 87`, or with ` inlined at "index.cu", line 3741`
/// after it (the caller, which the run's next line names again): the file and line.
fn frame(line: &str) -> Option<(String, u32)> {
    let rest = line.trim().strip_prefix("//## File ")?;
    let (file, rest) = quoted(rest)?;
    let (line_no, _) = number_after(rest, ", line ")?;
    Some((file.to_string(), line_no))
}

fn quoted(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start().strip_prefix('"')?;
    s.split_once('"')
}

fn number_after<'a>(s: &'a str, prefix: &str) -> Option<(u32, &'a str)> {
    let s = s.strip_prefix(prefix)?;
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    Some((s[..end].parse().ok()?, &s[end..]))
}

/// The line with each `` `(LABEL) `` whose label is known replaced by its address, and so
/// each label of a jump table's `BRANCH_TARGETS` list.
fn resolve_labels(line: &str, labels: &HashMap<&str, u32>) -> String {
    let line = match line.split_once("BRANCH_TARGETS ") {
        Some((before, list)) => {
            let (names, after) = list.split_once('"').unwrap_or((list, ""));
            let resolved: Vec<String> = names
                .split(',')
                .map(|n| {
                    labels
                        .get(n.trim())
                        .map_or(n.trim().to_string(), |a| format!("{a:#x}"))
                })
                .collect();
            format!("{before}BRANCH_TARGETS {}\"{after}", resolved.join(","))
        }
        None => line.to_string(),
    };
    let line = line.as_str();
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("`(") {
        let Some(len) = rest[start + 2..].find(')') else {
            break;
        };
        let name = &rest[start + 2..start + 2 + len];
        out.push_str(&rest[..start]);
        match labels.get(name) {
            Some(addr) => out.push_str(&format!("{addr:#x}")),
            None => out.push_str(&rest[start..start + 3 + len]),
        }
        rest = &rest[start + 3 + len..];
    }
    out.push_str(rest);
    out
}
