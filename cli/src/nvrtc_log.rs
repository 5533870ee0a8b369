//! NVRTC's messages about a spec's bodies, as diagnostics on the spec (`imac check
//! --arch`). The generated CUDA carries `#line` directives naming the spec around each
//! body, so NVRTC locates a body's error at the spec's line (`specs/k.ima(8): error:
//! expected a ";"`), followed by the line as it compiled it and a caret under the column.
//! Such a message becomes a diagnostic on that line of the spec, the caret's column
//! underlined; any other message is about the generated code (an imac bug) and is kept as
//! NVRTC wrote it.

use ima_dsl::Diagnostic;
use ima_dsl::Source;
use ima_dsl::ast::Span;

/// A log's messages: those about the spec as diagnostics, the others as NVRTC's text.
#[derive(Debug, Default)]
pub struct Messages {
    pub about_spec: Vec<Diagnostic>,
    pub about_generated: Vec<String>,
}

/// One message of the log: `FILE(LINE): error: MESSAGE` (or `warning #NNN-D: ...`), then
/// the lines after it up to the next message.
struct Message<'a> {
    file: &'a str,
    line: usize,
    warning: bool,
    text: &'a str,
    /// The source line as NVRTC quotes it (two spaces, then the line), and its caret line.
    quoted: Option<(&'a str, &'a str)>,
    whole: String,
}

/// `FILE(LINE): error: MESSAGE` or `FILE(LINE): warning #NNN-D: MESSAGE`.
fn header(line: &str) -> Option<(&str, usize, bool, &str)> {
    let (place, rest) = line.split_once("): ")?;
    let (file, number) = place.rsplit_once('(')?;
    let number = number.parse().ok()?;
    let (kind, text) = rest.split_once(": ")?;
    let warning = match kind.split(' ').next()? {
        "error" => false,
        "warning" => true,
        _ => return None,
    };
    Some((file, number, warning, text))
}

fn messages(log: &str) -> Vec<Message<'_>> {
    let lines: Vec<&str> = log.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((file, line, warning, text)) = header(lines[i]) else {
            i += 1;
            continue;
        };
        let end = (i + 1..lines.len())
            .find(|&j| header(lines[j]).is_some())
            .unwrap_or(lines.len());
        let after = &lines[i + 1..end];
        let quoted = match after {
            [source, caret, ..] if caret.trim() == "^" => Some((*source, *caret)),
            _ => None,
        };
        // The summary NVRTC ends with is no part of the last message.
        let whole: Vec<&str> = std::iter::once(lines[i])
            .chain(after.iter().copied())
            .take_while(|l| !l.contains(" detected in the compilation of "))
            .collect();
        found.push(Message {
            file,
            line,
            warning,
            text,
            quoted,
            whole: whole.join("\n").trim_end().to_string(),
        });
        i = end;
    }
    found
}

/// Where on `source`'s 1-based line `line` a message points: the caret's column where
/// NVRTC quotes the spec's line as it stands (a body's lines are copied verbatim), the
/// line's last `}` where it quotes the generated function's brace (said to stand on the
/// body's closing line), else the whole line.
fn span(source: &Source, line: usize, quoted: Option<(&str, &str)>) -> Option<Span> {
    let start: usize = source
        .text
        .split_inclusive('\n')
        .take(line.checked_sub(1)?)
        .map(str::len)
        .sum();
    let text = source.text[start..].lines().next()?;
    let (at, len) = match quoted {
        Some((quote, caret)) if quote.strip_prefix("  ") == Some(text) => {
            let column = caret.find('^')?.checked_sub(2)?.min(text.len());
            (column, usize::from(column < text.len()))
        }
        Some((quote, _)) if quote.trim() == "}" && text.contains('}') => (text.rfind('}')?, 1),
        _ => {
            let indent = text.len() - text.trim_start().len();
            (indent, text.trim().len())
        }
    };
    Some(Span::new(start + at, start + at + len))
}

/// The messages of NVRTC's `log` for the CUDA generated from `source`.
pub fn read(log: &str, source: &Source) -> Messages {
    let mut read = Messages::default();
    for m in messages(log) {
        let located = (m.file == source.name)
            .then(|| span(source, m.line, m.quoted))
            .flatten();
        match located {
            Some(span) => {
                let make = if m.warning {
                    Diagnostic::warning
                } else {
                    Diagnostic::error
                };
                let d = make(m.text.to_string(), span, "reported by NVRTC");
                // Each entry point instantiates the body again, and NVRTC says it again.
                if !read.about_spec.contains(&d) {
                    read.about_spec.push(d);
                }
            }
            None => read.about_generated.push(m.whole),
        }
    }
    // In the spec's order: NVRTC reports what it cannot parse before what it cannot
    // instantiate.
    read.about_spec.sort_by_key(|d| d.span.start);
    read
}

#[cfg(test)]
mod tests {
    use super::read;
    use ima_dsl::Source;

    const SPEC: &str = "kernel k {\n    in  x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body {\n        y(i) = z(i);\n        y(i) = x(i)\n    }\n}\n";

    /// A log as NVRTC writes it for SPEC's CUDA (`k.cu`): two errors in the body (each
    /// twice: two entry points instantiate it), a warning, one error in the generated code,
    /// and the summary.
    const LOG: &str = "specs/k.ima(6): error: identifier \"z\" is undefined\n          y(i) = z(i);\n                 ^\n\nspecs/k.ima(8): error: expected a \";\"\n  }\n  ^\n\nspecs/k.ima(6): error: identifier \"z\" is undefined\n          y(i) = z(i);\n                 ^\n\nspecs/k.ima(8): error: expected a \";\"\n  }\n  ^\n          detected during instantiation of \"void ima_kernel_k::ima_run()\" at line 2684 of k.cu\n\nspecs/k.ima(7): warning #550-D: variable \"v\" was set but never used\n          y(i) = x(i)\n          ^\n\nk.cu(2700): error: identifier \"q\" is undefined\n      q = 1;\n      ^\n\n3 errors detected in the compilation of \"k.cu\".\n";

    /// Each message about the spec points where a reader counts, once, in the spec's order:
    /// `z` on line 6 (column 16), line 7's first character, line 8's brace; the generated
    /// code's is kept whole.
    #[test]
    fn each_body_message_points_at_the_spec() {
        let source = Source::new("specs/k.ima", SPEC);
        let read = read(LOG, &source);
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
            [(6, 16, "z", false), (7, 9, "y", true), (8, 5, "}", false)]
        );
        assert_eq!(read.about_spec[0].message, "identifier \"z\" is undefined");
        assert_eq!(
            read.about_generated,
            ["k.cu(2700): error: identifier \"q\" is undefined\n      q = 1;\n      ^"]
        );
    }

    /// A line past the spec's end is kept as NVRTC's text; a log line that is no message
    /// is neither.
    #[test]
    fn what_cannot_be_placed_is_kept_as_written() {
        let source = Source::new("specs/k.ima", SPEC);
        let past = read("specs/k.ima(99): error: expected a \";\"\n", &source);
        assert!(past.about_spec.is_empty());
        assert_eq!(
            past.about_generated,
            ["specs/k.ima(99): error: expected a \";\""]
        );
        let nothing = read("nvrtc: out of memory\n", &source);
        assert!(nothing.about_spec.is_empty() && nothing.about_generated.is_empty());
    }
}
