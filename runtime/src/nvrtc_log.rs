//! NVRTC's log read as messages: each starts `FILE(LINE): KIND: TEXT` at the start of a
//! line, and the lines after it (details, the source line quoted with a caret under the
//! column, notes, the instantiations that led there) belong to it up to the next.
//!
//! A spec's body is instantiated by each of its kernel's four entry points, and NVRTC says
//! a body's error again for each, with only the instantiation it names changed: a log as
//! written has every such message four times. [`condense`] keeps each once, for the
//! runtime's errors; `imac check --arch` places the messages on the spec.

use std::collections::HashSet;

/// A message's first line: the file and line it names, whether it is a warning, and its
/// text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    pub file: &'a str,
    pub line: usize,
    pub warning: bool,
    pub text: &'a str,
}

/// The header on `line`: `FILE(LINE): KIND: TEXT`, unindented (NVRTC indents what
/// follows), KIND being `error`, `catastrophic error`, `internal error` or `warning`
/// (`warning #550-D`). A `note` or `remark` is no header: it belongs to the message
/// before ([`note`]). `file` names a file whose path may hold `(` or `): ` (the spec's): a
/// line that starts with it is read as its message.
pub fn header<'a>(line: &'a str, file: &str) -> Option<Header<'a>> {
    let (named, number, kind, text) = parts(line, file)?;
    let warning = match kind {
        "error" | "catastrophic error" | "internal error" => false,
        "warning" => true,
        _ => return None,
    };
    Some(Header {
        file: named,
        line: number,
        warning,
        text,
    })
}

/// The text of a note on `line` (`FILE(LINE): note #3322-D: TEXT`, or a `remark`), which
/// says more of the message before it, such as an overload's candidate that did not match.
pub fn note(line: &str) -> Option<&str> {
    let (_, _, kind, text) = parts(line, "")?;
    matches!(kind, "note" | "remark").then_some(text)
}

/// `FILE(LINE): KIND: TEXT` read into its file, line, kind (its number, ` #550-D`, cut
/// off) and text.
fn parts<'a>(line: &'a str, file: &str) -> Option<(&'a str, usize, &'a str, &'a str)> {
    if line.starts_with(' ') {
        return None;
    }
    let (named, rest) = match line.strip_prefix(file).and_then(|r| r.strip_prefix('(')) {
        Some(rest) if !file.is_empty() => (&line[..file.len()], rest),
        _ => {
            let (place, _) = line.split_once("): ")?;
            let (named, _) = place.rsplit_once('(')?;
            (named, &line[named.len() + 1..])
        }
    };
    let (number, rest) = rest.split_once("): ")?;
    let (kind, text) = rest.split_once(": ")?;
    Some((named, number.parse().ok()?, kind.split(" #").next()?, text))
}

/// Whether `line` is one of NVRTC's closing lines, no part of the last message: its count
/// (`2 errors detected in the compilation of "k.cu".`), and where it stopped early, `Error
/// limit reached.` before it and `Compilation terminated.` after.
pub fn is_summary(line: &str) -> bool {
    line.contains(" detected in the compilation of ")
        || line == "Error limit reached."
        || line == STOPPED
}

/// NVRTC's last line where it stopped before the source's end (at its error limit, or at
/// an error it cannot go past).
pub const STOPPED: &str = "Compilation terminated.";

/// A message of the log: its header, and its lines (the header's, then those after it up
/// to the next message), NVRTC's closing count left out.
#[derive(Debug)]
pub struct Message<'a> {
    pub header: Header<'a>,
    pub lines: Vec<&'a str>,
}

impl<'a> Message<'a> {
    /// Where in `lines` its caret stands (a `^` alone, under the source line it quotes).
    pub fn caret(&self) -> Option<usize> {
        self.lines.iter().position(|l| l.trim() == "^")
    }

    /// What it says, to tell it said again for another entry point: its lines up to its
    /// caret (its first line, details and quoted source), not the instantiation after.
    pub fn said(&self) -> &[&'a str] {
        &self.lines[..self.caret().map_or(1, |c| c + 1)]
    }
}

/// The messages of `log`, in its order (`file` as [`header`] takes it); what is no part
/// of one (lines before the first, the closing count) is left out.
pub fn messages<'a>(log: &'a str, file: &str) -> Vec<Message<'a>> {
    let lines: Vec<&str> = log.lines().collect();
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| header(lines[i], file).is_some())
        .collect();
    starts
        .iter()
        .enumerate()
        .filter_map(|(n, &start)| {
            let end = starts.get(n + 1).copied().unwrap_or(lines.len());
            Some(Message {
                header: header(lines[start], file)?,
                lines: (lines[start..end].iter().copied())
                    .filter(|l| !is_summary(l))
                    .collect(),
            })
        })
        .collect()
}

/// `log` with each message once: a message whose first line and quoted source (up to its
/// caret) an earlier one had is left out, and a last line says how many were. What is no
/// message (the summary, lines before the first) is kept; a log with nothing said twice
/// is returned as written.
pub fn condense(log: &str) -> String {
    let mut seen = HashSet::new();
    let (kept, repeated): (Vec<Message>, Vec<Message>) = messages(log, "")
        .into_iter()
        .partition(|m| seen.insert(m.said().join("\n")));
    if repeated.is_empty() {
        return log.to_string();
    }
    // What is no message: the lines before the first, and NVRTC's closing count.
    let before_first = log.lines().take_while(|l| header(l, "").is_none());
    let summary: Vec<&str> = (log.lines())
        .skip_while(|l| header(l, "").is_none())
        .filter(|l| is_summary(l))
        .collect();
    let kept_lines = kept.iter().flat_map(|m| m.lines.iter().copied());
    let mut out = (before_first.chain(kept_lines))
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_string();
    if !summary.is_empty() {
        out.push_str("\n\n");
        out.push_str(&summary.join("\n"));
    }
    out.push_str(&format!(
        "\n({} message(s) left out that said the same again: each of a kernel's entry points \
         instantiates its body)",
        repeated.len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::{Header, condense, header, note};
    use proptest::prelude::*;

    proptest! {
        /// For any sequence of messages drawn from a few (each said with the instantiation
        /// of its place in the log), the condensed log has each message once, in the order
        /// of their first saying, the instantiation of that first, and the count of the
        /// rest; with nothing said twice it is the log itself.
        #[test]
        fn each_message_is_said_once_in_the_order_first_said(
            said in proptest::collection::vec(0usize..4, 1..12),
        ) {
            let message = |id: usize, at: usize| {
                format!(
                    "specs/k.ima({}): error: e{id}\n  q{id}\n  ^\n          detected during \
                     instantiation {at}\n\n",
                    5 + id
                )
            };
            let log: String = said.iter().enumerate().map(|(at, &id)| message(id, at)).collect();
            let log = format!("{log}{} errors detected in the compilation of \"k.cu\".", said.len());
            let mut first: Vec<(usize, usize)> = Vec::new();
            for (at, &id) in said.iter().enumerate() {
                if first.iter().all(|&(seen, _)| seen != id) {
                    first.push((id, at));
                }
            }
            let condensed = condense(&log);
            let left_out = said.len() - first.len();
            if left_out == 0 {
                prop_assert_eq!(condensed, log);
            } else {
                let kept: String = first.iter().map(|&(id, at)| message(id, at)).collect();
                let expected = format!(
                    "{}\n\n{} errors detected in the compilation of \"k.cu\".\n({left_out} \
                     message(s) left out that said the same again: each of a kernel's entry \
                     points instantiates its body)",
                    kept.trim_end(),
                    said.len()
                );
                prop_assert_eq!(condensed, expected);
            }
        }
    }

    /// A message is read off its first line, in the spec's name too where it holds `): `;
    /// a note (read by `note`), an indented line and the summary are not messages.
    #[test]
    fn a_header_is_a_message_s_first_line() {
        assert_eq!(
            header("specs/k.ima(6): error: identifier \"z\" is undefined", ""),
            Some(Header {
                file: "specs/k.ima",
                line: 6,
                warning: false,
                text: "identifier \"z\" is undefined",
            })
        );
        assert_eq!(
            header(
                "k.cu(9): warning #550-D: variable \"v\" was set but never used",
                ""
            )
            .map(|h| (h.file, h.warning)),
            Some(("k.cu", true))
        );
        let odd = "a): b/k.ima(6): warning: it";
        assert_eq!(
            header(odd, "a): b/k.ima").map(|h| h.file),
            Some("a): b/k.ima")
        );
        assert_eq!(
            note("__nv_nvrtc_builtin_header.h(4429): note #3322-D: f(int) does not match"),
            Some("f(int) does not match")
        );
        assert_eq!(note("k.cu(3): remark: r"), Some("r"));
        assert_eq!(note("k.cu(3): error: e"), None);
        for no in [
            "__nv_nvrtc_builtin_header.h(4429): note #3322-D: number of parameters",
            "  y(i) = z(i);",
            "2 errors detected in the compilation of \"k.cu\".",
            "nvrtc: out of memory",
        ] {
            assert_eq!(header(no, ""), None, "{no}");
        }
    }

    /// A body's error said for two instantiations is kept once, with its notes and the
    /// instantiation it was first said for; another message on the same line with
    /// another caret is kept; the summary stays last.
    #[test]
    fn each_message_is_kept_once() {
        let z_for_int = concat!(
            "specs/k.ima(6): error: identifier \"z\" is undefined\n",
            "          y(i) = z(i);\n",
            "                 ^\n",
            "          detected during:\n",
            "            instantiation of \"ima_body [with I=int]\" at line 2671 of k.cu\n",
            "\n",
        );
        let f = concat!(
            "specs/k.ima(7): error: no instance of overloaded function \"f\" matches\n",
            "            argument types are: (float)\n",
            "          y(i) = f(x(i));\n",
            "                 ^\n",
            "__nv_nvrtc_builtin_header.h(4429): note #3322-D: f(int, int) does not match\n",
            "  int f(int a, int b)\n",
            "      ^\n",
            "\n",
        );
        let z_for_long_long = z_for_int.replace("I=int", "I=long long");
        let z_elsewhere = concat!(
            "specs/k.ima(6): error: identifier \"z\" is undefined\n",
            "          y(i) = z(i) + z(i);\n",
            "                        ^\n",
            "\n",
        );
        let summary = "4 errors detected in the compilation of \"k.cu\".";
        let log = [z_for_int, f, &z_for_long_long, z_elsewhere, summary].concat();
        let expected = [
            z_for_int,
            f,
            z_elsewhere,
            summary,
            "\n(1 message(s) left out that said the same again: each of a kernel's entry points \
             instantiates its body)",
        ]
        .concat();
        assert_eq!(condense(&log), expected);
    }

    /// Where NVRTC stopped early, its closing lines stay last, though the message they
    /// follow, said again, is left out.
    #[test]
    fn a_stopped_log_keeps_its_closing_lines() {
        let z = |with: &str| {
            format!(
                "k.ima(6): error: identifier \"z\" is undefined\n  y(i) = z(i);\n         ^\n          \
                 detected during instantiation of \"ima_body [with I={with}]\"\n\n"
            )
        };
        let closing = "Error limit reached.\n2 errors detected in the compilation of \"k.cu\".\nCompilation terminated.";
        let log = [z("int"), z("long long"), closing.to_string()].concat();
        assert_eq!(
            condense(&log),
            [
                z("int").trim_end(),
                "\n\n",
                closing,
                "\n(1 message(s) left out that said the same again: each of a kernel's entry \
                 points instantiates its body)",
            ]
            .concat()
        );
    }

    /// A log with no message, or none said twice, is kept as written.
    #[test]
    fn a_log_with_nothing_said_twice_is_kept() {
        assert_eq!(
            condense("nvrtcCompileProgram: out of memory"),
            "nvrtcCompileProgram: out of memory"
        );
        let once = "k.cu(3): error: expected a \";\"\n  }\n  ^\n\n1 error detected in the compilation of \"k.cu\".";
        assert_eq!(condense(once), once);
    }
}
