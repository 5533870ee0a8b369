//! NVRTC's messages about a spec's bodies, as diagnostics on the spec (`imac check
//! --arch`). The generated CUDA carries `#line` directives naming the spec around each
//! body, so NVRTC locates a body's error at the spec's line (`specs/k.ima(8): error:
//! expected a ";"`), then may say more (`argument types are: (int)`), then quotes the line
//! as it compiled it, two spaces in, with a caret under the column. Such a message becomes
//! a diagnostic on that line of the spec, the caret's column underlined; any other message
//! is about the generated code (an imac bug) and is kept as NVRTC wrote it.

use std::collections::HashSet;

use ima_codegen::cuda::{ENTRY_POINTS, EntryPoint, KERNEL_NAMESPACE_PREFIX};
use ima_dsl::ast::Span;
use ima_dsl::{Diagnostic, Source, ir};
use ima_runtime::nvrtc_log::{self, Header, note};

/// A log's messages: those about the spec as diagnostics, the others as NVRTC's text.
#[derive(Debug, Default)]
pub struct Messages {
    pub about_spec: Vec<Diagnostic>,
    /// Errors in the generated code, and warnings, each once.
    pub about_generated: Vec<String>,
    pub generated_warnings: Vec<String>,
    /// Whether NVRTC stopped before the source's end (at its error limit, or at an error
    /// it cannot go past): more may follow once these are fixed.
    pub stopped: bool,
}

/// One message of the log: `FILE(LINE): KIND: TEXT`, then the lines after it up to the
/// next message.
struct Message<'a> {
    file: &'a str,
    line: usize,
    warning: bool,
    text: String,
    /// The source line as NVRTC quotes it, and its caret's byte column in the quote.
    quoted: Option<(&'a str, usize)>,
    /// Its notes' texts (an overload's candidates that did not match).
    notes: Vec<&'a str>,
    /// The entry point whose instantiation of a body it was said for, as its kernel's name
    /// and the entry point (NVRTC's `detected during` lines).
    instantiated_for: Option<(&'a str, EntryPoint)>,
    /// What it says, to tell it said again (`nvrtc_log::Message::said`).
    said: Vec<&'a str>,
    whole: String,
}

/// The kernel and entry point an instantiation line names (`instantiation of "void
/// ima_kernel_k::ima_body(...) [with I=int, IMA_CHECKED=false]" at line 2668 of k.cu`).
fn instantiated_for(line: &str) -> Option<(&str, EntryPoint)> {
    let (_, named) = line.split_once(KERNEL_NAMESPACE_PREFIX)?;
    let (kernel, _) = named.split_once("::")?;
    let entry =
        (ENTRY_POINTS.iter()).find(|e| named.contains(&format!("[with {}]", e.template_args())))?;
    Some((kernel, *entry))
}

/// The messages of `log` (as the runtime reads them), the spec's read as its file's
/// whatever its path holds.
fn messages<'a>(log: &'a str, spec: &str) -> Vec<Message<'a>> {
    nvrtc_log::messages(log, spec)
        .into_iter()
        .map(|m| {
            let Header {
                file,
                line,
                warning,
                text,
            } = m.header;
            let after = &m.lines[1..];
            let caret = m.caret().map(|c| c - 1);
            // What NVRTC says between the message and its quote belongs to the message.
            let details = after[..caret.map_or(0, |c| c.saturating_sub(1))]
                .iter()
                .filter(|l| note(l).is_none())
                .map(|l| l.trim())
                .filter(|l| !l.is_empty());
            let notes = after.iter().filter_map(|l| note(l)).collect();
            let instantiated_for = after.iter().find_map(|l| instantiated_for(l));
            let text = std::iter::once(text)
                .chain(details)
                .collect::<Vec<_>>()
                .join("; ");
            let quoted = caret
                .filter(|&c| c > 0)
                .and_then(|c| Some((after[c - 1], after[c].find('^')?)));
            Message {
                file,
                line,
                warning,
                text,
                quoted,
                notes,
                instantiated_for,
                said: m.said().to_vec(),
                whole: m.lines.join("\n").trim_end().to_string(),
            }
        })
        .collect()
}

/// The byte offset where `source`'s 1-based line `line` starts (its end, past the last).
fn line_start(source: &Source, line: usize) -> Option<usize> {
    let before = source.text.split_inclusive('\n').take(line.checked_sub(1)?);
    Some(before.map(str::len).sum())
}

/// Where each body's closing brace stands in `source` (a byte offset): the generated
/// function's own brace is said to stand there (its `#line`), so NVRTC's caret under it
/// means the spec's brace.
fn braces(source: &Source, m: &ir::Module) -> Vec<usize> {
    m.kernels
        .iter()
        .filter_map(|k| {
            let b = &k.body;
            match b.text.rsplit_once('\n') {
                // The body's last line starts its spec line; the brace follows it.
                Some((_, last)) => Some(line_start(source, b.brace_line())? + last.len()),
                // `body { ... }` on one line: the first `{TEXT}` on it is the body's.
                None => {
                    let start = line_start(source, b.line)?;
                    let text = source.text[start..].lines().next()?;
                    Some(start + text.find(&format!("{{{}}}", b.text))? + 1 + b.text.len())
                }
            }
        })
        .collect()
}

/// Where on `source`'s 1-based line `line` a message points: at the caret, where NVRTC
/// quotes the spec's line or the part of it that is a body's (its first line after
/// `body {`, its last before the brace); at the spec's brace where it quotes the generated
/// function's; else the whole line. A caret inside a character (NVRTC counts bytes)
/// underlines the character.
fn span(
    source: &Source,
    braces: &[usize],
    line: usize,
    quoted: Option<(&str, usize)>,
) -> Option<Span> {
    let start = line_start(source, line)?;
    let text = source.text[start..].lines().next()?;
    let text = text.strip_suffix('\r').unwrap_or(text);
    let whole = || {
        let indent = text.len() - text.trim_start().len();
        Some(Span::new(
            start + indent,
            start + indent + text.trim().len(),
        ))
    };
    let Some((quote, caret)) = quoted else {
        return whole();
    };
    let (Some(quote), Some(caret)) = (quote.strip_prefix("  "), caret.checked_sub(2)) else {
        return whole();
    };
    // The generated function's brace stands alone, unindented.
    if quote == "}" {
        let end = start + text.len();
        return match braces.iter().find(|&&b| (start..end).contains(&b)) {
            Some(&b) => Some(Span::new(b, b + 1)),
            None => whole(),
        };
    }
    let offset = if text.starts_with(quote) {
        0
    } else if text.ends_with(quote) {
        text.len() - quote.len()
    } else if let Some(offset) = text.find(quote) {
        offset
    } else {
        return whole();
    };
    let mut at = (offset + caret).min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let len = text[at..].chars().next().map_or(0, char::len_utf8);
    Some(Span::new(start + at, start + at + len))
}

/// A file's name as it can stand at the start of a message's line: NVRTC writes a path as
/// it is, so one with a line break would split the message's first line in two.
fn one_line(name: &str) -> String {
    name.replace('\n', "\\n").replace('\r', "\\r")
}

/// The messages of NVRTC's `log` for the CUDA generated from `m`, checked from `source`.
/// A message about the generated code said again (each entry point instantiates the code
/// again) is kept once.
pub fn read(log: &str, source: &Source, m: &ir::Module) -> Messages {
    let braces = braces(source, m);
    let spec = one_line(&source.name);
    let mut log = log.to_string();
    for name in [&source.name, &ima_codegen::cu_file(&source.name)] {
        if name.contains(['\n', '\r']) {
            log = log.replace(name.as_str(), &one_line(name));
        }
    }
    let mut read = Messages::default();
    // Each diagnostic, with the entry points whose instantiations NVRTC said it for.
    let mut about_spec: Vec<(Diagnostic, Vec<(&str, EntryPoint)>)> = Vec::new();
    let mut generated_said = HashSet::new();
    for msg in messages(&log, &spec) {
        let located = (msg.file == spec)
            .then(|| span(source, &braces, msg.line, msg.quoted))
            .flatten();
        match located {
            Some(span) => {
                let make = if msg.warning {
                    Diagnostic::warning
                } else {
                    Diagnostic::error
                };
                let mut d = make(msg.text, span, "reported by NVRTC");
                for n in &msg.notes {
                    d = d.with_note(*n);
                }
                // Each entry point instantiates the body again, and NVRTC says it again;
                // a character it does not know, once a byte.
                let at = match about_spec.iter().position(|(said, _)| *said == d) {
                    Some(at) => at,
                    None => {
                        about_spec.push((d, Vec::new()));
                        about_spec.len() - 1
                    }
                };
                // NVRTC says a warning once a place, whichever instantiation it met it in
                // first (`only_in` reads the errors).
                if !msg.warning {
                    about_spec[at].1.extend(msg.instantiated_for);
                }
            }
            None => {
                if generated_said.insert(msg.said) {
                    match msg.warning {
                        false => read.about_generated.push(msg.whole),
                        true => read.generated_warnings.push(msg.whole),
                    }
                }
            }
        }
    }
    read.stopped = log.lines().any(|l| l == nvrtc_log::STOPPED);
    // Where NVRTC stopped early, an instantiation it did not reach says nothing. An error
    // whose words name the index type (`"int *"`, `"long long *"`) is two messages at one
    // place, each said of two entry points: the place's are read together.
    let at_place = |start: usize| -> Vec<EntryPoint> {
        (about_spec.iter())
            .filter(|(d, _)| d.span.start == start)
            .flat_map(|(_, entries)| entries.iter().map(|&(_, e)| e))
            .collect()
    };
    let notes: Vec<Option<String>> = (about_spec.iter())
        .map(|(d, entries)| only_in(entries, &at_place(d.span.start)))
        .collect();
    read.about_spec = (about_spec.into_iter().zip(notes))
        .map(|((d, _), note)| match note {
            Some(only) if !read.stopped => d.with_note(only),
            _ => d,
        })
        .collect();
    // In the spec's order: NVRTC reports what it cannot parse before what it cannot
    // instantiate.
    read.about_spec.sort_by_key(|d| d.span.start);
    read
}

/// A note on a body's error that NVRTC said for some of its kernel's entry points and not
/// the others (`entries`): an error that only 64-bit indices make (`I = long long`). Said
/// for one only, it is no such error: NVRTC says some errors (a missing `;`) once a place,
/// in the first instantiation; said for two or three, it says each again, and the others
/// do not make it, unless another error at its place was said of them (`at_place`: the
/// entry points any error there was said of), as one whose words name the index type is.
fn only_in(entries: &[(&str, EntryPoint)], at_place: &[EntryPoint]) -> Option<String> {
    let (kernel, _) = entries.first()?;
    let mut said: Vec<EntryPoint> = Vec::new();
    for (_, e) in entries {
        if !said.contains(e) {
            said.push(*e);
        }
    }
    let all_met = ENTRY_POINTS.iter().all(|e| at_place.contains(e));
    if said.len() < 2 || all_met {
        return None;
    }
    said.sort_by_key(|e| ENTRY_POINTS.iter().position(|p| p == e));
    let names = |entries: &mut dyn Iterator<Item = &EntryPoint>| {
        entries
            .map(|e| e.name(kernel))
            .collect::<Vec<_>>()
            .join(" and ")
    };
    let mut shared = Vec::new();
    if said.iter().all(|e| e.index_type() == said[0].index_type()) {
        shared.push(format!("I = {}", said[0].index_type()));
    }
    if said.iter().all(|e| e.checked == said[0].checked) {
        shared.push(format!("IMA_CHECKED = {}", said[0].checked));
    }
    let with = if shared.is_empty() {
        String::new()
    } else {
        format!(" with {}", shared.join(", "))
    };
    Some(format!(
        "NVRTC says this only of {}, which instantiate the body{with} (not of {})",
        names(&mut said.iter()),
        names(&mut ENTRY_POINTS.iter().filter(|e| !said.contains(e)))
    ))
}

#[cfg(test)]
mod tests {
    use super::read;
    use ima_dsl::Source;

    const SPEC: &str = "kernel k {\n    in  x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body { y(i) = z(i);\n        y(i) = f(1, 2);\n        const char* s = \"\u{e9}\";\n        y(i) = x(i) }\n}\n";

    /// A log as NVRTC writes it for SPEC's CUDA (`k.cu`): an error on the body's first
    /// line (twice: two entry points instantiate it), one with details before its quote
    /// and a note after,
    /// one per byte of a two-byte character, a warning, a missing `;` at the brace, one
    /// error and one warning in the generated code, and the summary.
    const LOG: &str = concat!(
        "specs/k.ima(5): error: identifier \"z\" is undefined\n   y(i) = z(i);\n          ^\n\n",
        "specs/k.ima(8): error: expected a \";\"\n  }\n  ^\n",
        "          detected during instantiation of \"void ima_kernel_k::ima_run()\" at line 2684 of k.cu\n\n",
        "specs/k.ima(5): error: identifier \"z\" is undefined\n   y(i) = z(i);\n          ^\n\n",
        "specs/k.ima(6): error: no instance of function template \"f\" matches the argument list\n",
        "            argument types are: (int, int)\n          y(i) = f(1, 2);\n                 ^\n",
        "__nv_nvrtc_builtin_header.h(9): note #3322-D: number of parameters of function \"f(int)\" does not match the call\n",
        "  int f(int a)\n      ^\n\n",
        "specs/k.ima(7): error: unrecognized token\n          const char* s = \"\u{e9}\";\n                           ^\n\n",
        "specs/k.ima(7): error: unrecognized token\n          const char* s = \"\u{e9}\";\n                            ^\n\n",
        "specs/k.ima(8): warning #550-D: variable \"v\" was set but never used\n          y(i) = x(i) \n          ^\n\n",
        "k.cu(2700): error: identifier \"q\" is undefined\n      q = 1;\n      ^\n\n",
        "k.cu(2704): warning #61-D: integer operation result is out of range\n      n = A * A;\n          ^\n\n",
        "3 errors detected in the compilation of \"k.cu\".\n",
    );

    /// Each message about the spec points where a reader counts, once, in the spec's
    /// order: `z` after `body {` (line 5, column 19), `f` with its argument types, the
    /// `\u{e9}` whose two bytes NVRTC reports apart, line 8's `y`, and line 8's brace
    /// (column 21), not a column of the generated file's; the generated code's is kept
    /// whole.
    #[test]
    fn each_body_message_points_at_the_spec() {
        let source = Source::new("specs/k.ima", SPEC);
        let m = ima_dsl::compile(&source).expect("the spec checks");
        let read = read(LOG, &source, &m);
        let at: Vec<(usize, usize, &str, bool)> = read
            .about_spec
            .iter()
            .map(|d| {
                let (line, col) = source.line_col(d.span.start);
                (line, col, &source.text[d.span.range()], d.warning)
            })
            .collect();
        assert_eq!(
            at,
            [
                (5, 19, "z", false),
                (6, 16, "f", false),
                (7, 26, "\u{e9}", false),
                (8, 9, "y", true),
                (8, 21, "}", false),
            ]
        );
        assert_eq!(
            read.about_spec[1].message,
            "no instance of function template \"f\" matches the argument list; argument types are: (int, int)"
        );
        assert_eq!(
            read.about_spec[1].notes,
            ["number of parameters of function \"f(int)\" does not match the call"]
        );
        assert_eq!(
            read.about_generated,
            ["k.cu(2700): error: identifier \"q\" is undefined\n      q = 1;\n      ^"]
        );
        assert_eq!(
            read.generated_warnings,
            [
                "k.cu(2704): warning #61-D: integer operation result is out of range\n      n = A * A;\n          ^"
            ]
        );
    }

    /// A body's error said for some of its kernel's entry points and not the others gets
    /// a note naming them; one said for all four or for one (NVRTC says some errors once a
    /// place), a warning (said once a place), or an error in a log NVRTC stopped early
    /// (where it may not have reached the others), none.
    #[test]
    fn a_message_some_entry_points_meet_names_them() {
        let source = Source::new("specs/k.ima", SPEC);
        let m = ima_dsl::compile(&source).expect("the spec checks");
        let said = |line: usize, with: &str| {
            format!(
                "specs/k.ima({line}): error: e{line}\n          detected during:\n            \
                 instantiation of \"void ima_kernel_k::ima_body(ima_kernel_k::ima_accessor_x<I, \
                 IMA_CHECKED>) [with {with}]\" at line 2668 of k.cu\n\n"
            )
        };
        let (i32, i64) = ("I=int, IMA_CHECKED=false", "I=long long, IMA_CHECKED=false");
        let (i32c, i64c) = ("I=int, IMA_CHECKED=true", "I=long long, IMA_CHECKED=true");
        let log = [said(5, i32), said(5, i64c), said(6, i32), said(6, i64)]
            .into_iter()
            .chain([i32c, i64c].map(|with| said(6, with)))
            .collect::<String>();
        let notes = |log: &str| -> Vec<Vec<String>> {
            (read(log, &source, &m).about_spec.into_iter())
                .map(|d| d.notes)
                .collect()
        };
        assert_eq!(
            notes(&log),
            [
                vec![
                    "NVRTC says this only of k_i32 and k_i64_checked, which instantiate the \
                     body (not of k_i64 and k_i32_checked)"
                        .to_string()
                ],
                vec![]
            ]
        );
        let only_64 = said(5, i64) + &said(5, i64c);
        assert_eq!(
            notes(&only_64),
            [vec![
                "NVRTC says this only of k_i64 and k_i64_checked, which instantiate the body \
                 with I = long long (not of k_i32 and k_i32_checked)"
                    .to_string()
            ]]
        );
        // One error whose words name the index type: two messages at one place, of two
        // entry points each, all four together.
        let typed = |with: &str, ty: &str| said(5, with).replace("e5", &format!("e5 {ty}"));
        let both = [(i32, "int"), (i32c, "int"), (i64, "ll"), (i64c, "ll")]
            .map(|(with, ty)| typed(with, ty))
            .concat();
        assert_eq!(notes(&both), [Vec::<String>::new(), Vec::new()]);
        let warned = said(5, i32).replace("error: e5", "warning #550-D: e5");
        assert_eq!(notes(&warned), [Vec::<String>::new()]);
        assert_eq!(notes(&said(5, i64)), [Vec::<String>::new()]);
        let stopped = only_64 + "Compilation terminated.\n";
        assert_eq!(notes(&stopped), [Vec::<String>::new()]);
        assert!(read(&stopped, &source, &m).stopped);
    }

    /// NVRTC writes a path as it is: where the spec's holds a line break, so do its
    /// messages' first lines, and a message about a body is placed on the spec all the
    /// same. A message about the generated code said for two entry points is kept once
    /// (the file's name written on one line).
    #[test]
    fn a_path_with_a_line_break_is_read_whole() {
        let source = Source::new("a\nb.ima", SPEC);
        let m = ima_dsl::compile(&source).expect("the spec checks");
        let generated = |with: &str| {
            format!(
                "a\nb.cu(2700): error: identifier \"q\" is undefined\n      q = 1;\n      ^\n          \
                 detected during instantiation of \"ima_run\" [with I={with}] at line 2690 of a\nb.cu\n\n"
            )
        };
        let log = [
            "a\nb.ima(5): error: identifier \"z\" is undefined\n   y(i) = z(i);\n          ^\n\n",
            &generated("int"),
            &generated("long long"),
            "2 errors detected in the compilation of \"a\nb.cu\".\n",
        ]
        .concat();
        let read = read(&log, &source, &m);
        let at: Vec<(usize, usize, &str)> = (read.about_spec.iter())
            .map(|d| {
                let (line, col) = source.line_col(d.span.start);
                (line, col, &source.text[d.span.range()])
            })
            .collect();
        assert_eq!(at, [(5, 19, "z")]);
        assert_eq!(
            read.about_generated,
            [
                "a\\nb.cu(2700): error: identifier \"q\" is undefined\n      q = 1;\n      ^\n          \
              detected during instantiation of \"ima_run\" [with I=int] at line 2690 of a\\nb.cu"
            ]
        );
    }

    /// A line past the spec's end is kept as NVRTC's text, as is a message of the spec
    /// whose path holds `): `; a log line that is no message is neither, and a quoted
    /// line that looks like a message is part of its own.
    #[test]
    fn what_cannot_be_placed_is_kept_as_written() {
        let source = Source::new("specs/k.ima", SPEC);
        let m = ima_dsl::compile(&source).expect("the spec checks");
        let past = read("specs/k.ima(99): error: expected a \";\"\n", &source, &m);
        assert!(past.about_spec.is_empty());
        assert_eq!(
            past.about_generated,
            ["specs/k.ima(99): error: expected a \";\""]
        );
        let nothing = read("nvrtc: out of memory\n", &source, &m);
        assert!(nothing.about_spec.is_empty() && nothing.about_generated.is_empty());
        let odd = Source::new("a): b/k.ima", SPEC);
        let read_odd = read(
            "a): b/k.ima(6): warning: it\n  y(i) = f(1, 2);\n  ^\n",
            &odd,
            &m,
        );
        assert_eq!(read_odd.about_spec.len(), 1, "{read_odd:?}");
        let quoted = read(
            "specs/k.ima(6): error: e\n  printf(\"k.cu(1): error: x\");\n  ^\n",
            &source,
            &m,
        );
        assert_eq!(
            (quoted.about_spec.len(), quoted.about_generated.len()),
            (1, 0)
        );
    }
}
