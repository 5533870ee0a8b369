//! A body's CUDA C read as far as imac needs to, without parsing it: its code apart from
//! comments and literals ([`code_only`]), the words it names ([`mentions_word`]), and its
//! preprocessor directives ([`Directives`]): the macros it defines, which the generated
//! code undefines after the body where they were not defined before it, so that they
//! reach no other kernel's declarations, and whether its conditionals close.

/// C source `text` with its comments and string and character literals blanked (newlines
/// kept), so that a word inside one is not read as code. A `'` inside a number is C++14's
/// digit separator (`1'000`); one elsewhere, after a prefix too (`u8'a'`), starts a
/// character literal, as the grammar reads a body (dsl/src/ima.pest).
pub fn code_only(text: &str) -> String {
    enum In {
        Code,
        LineComment,
        BlockComment,
        Literal(char),
    }
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut state = In::Code;
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut previous = ' ';
    let mut in_number = false;
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let blank = if c == '\n' { '\n' } else { ' ' };
        match state {
            In::Code => match (c, next) {
                ('/', Some('/')) => state = In::LineComment,
                ('/', Some('*')) => {
                    chars.next();
                    out.push(' ');
                    state = In::BlockComment;
                }
                ('"', _) => state = In::Literal(c),
                ('\'', _) if !in_number => state = In::Literal(c),
                _ => {
                    in_number = match in_number {
                        true => ident(c) || c == '.' || c == '\'',
                        false => c.is_ascii_digit() && !ident(previous),
                    };
                    out.push(c);
                    previous = c;
                    continue;
                }
            },
            In::LineComment if c == '\n' => state = In::Code,
            In::BlockComment if c == '*' && next == Some('/') => {
                chars.next();
                out.push(' ');
                state = In::Code;
            }
            In::Literal(_) if c == '\\' => {
                if let Some(escaped) = chars.next() {
                    out.push(if escaped == '\n' { '\n' } else { ' ' });
                }
            }
            In::Literal(quote) if c == quote => state = In::Code,
            _ => {}
        }
        (previous, in_number) = (' ', false);
        out.push(blank);
    }
    out
}

/// `text` has `word` as a whole identifier (not inside a longer one).
pub fn mentions_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// A body's preprocessor directives, read from its code (a `#` in a comment or a literal
/// is none).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Directives {
    /// The names its `#define`s define, in order, each once, under a conditional too.
    pub defined: Vec<String>,
    /// The 0-based line of each `#if`, `#ifdef` or `#ifndef` that no `#endif` closes.
    pub unclosed: Vec<usize>,
    /// The 0-based line of each `#endif` that closes nothing.
    pub unopened: Vec<usize>,
    /// Each `#undef` of a macro the body did not define above it (one defined before the
    /// body, which later kernels would lose: the generated code cannot restore it), by
    /// 0-based line.
    pub undefined_not_own: Vec<(usize, String)>,
    /// Each `#define` of a name starting `ima_` or `IMA_`, imac's own, by 0-based line.
    pub defined_imacs: Vec<(usize, String)>,
}

impl Directives {
    pub fn of(body: &str) -> Directives {
        let mut found = Directives::default();
        let mut open = Vec::new();
        for (line, text) in code_only(body).lines().enumerate() {
            let Some(directive) = text.trim_start().strip_prefix('#') else {
                continue;
            };
            let (word, rest) = first_word(directive);
            // The macro a `#define` or `#undef` names; not one (`#define 8 x`, `defined`)
            // is the body's own error, which NVRTC reports.
            let name = Some(first_word(rest).0)
                .filter(|n| n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
                .filter(|n| *n != "defined");
            match word {
                "if" | "ifdef" | "ifndef" => open.push(line),
                "endif" => {
                    let closed = open.pop();
                    if closed.is_none() {
                        found.unopened.push(line);
                    }
                }
                "define" => {
                    let Some(name) = name else { continue };
                    if crate::reserved::imacs_prefix(name) {
                        found.defined_imacs.push((line, name.to_string()));
                    } else if !found.defined.iter().any(|d| d == name) {
                        found.defined.push(name.to_string());
                    }
                }
                "undef" => match name {
                    Some(name) if !found.defined.iter().any(|d| d == name) => {
                        found.undefined_not_own.push((line, name.to_string()))
                    }
                    _ => {}
                },
                _ => {}
            }
        }
        found.unclosed = open;
        found
    }
}

/// `text`'s first word (letters, digits and `_`) after its blanks, and what follows it.
fn first_word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    let end = (text.find(|c: char| !c.is_ascii_alphanumeric() && c != '_')).unwrap_or(text.len());
    text.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::{Directives, code_only, mentions_word};

    #[test]
    fn a_word_in_a_comment_or_a_literal_is_not_code() {
        let waits = |body: &str| mentions_word(&code_only(body), "ima_wait_for_inputs");
        assert!(waits("ima_wait_for_inputs();"));
        assert!(waits(
            "printf(\"// \\\" not a comment\"); ima_wait_for_inputs();"
        ));
        assert!(waits("int n = 1'000'000; ima_wait_for_inputs();"));
        assert!(waits("/* a */ ima_wait_for_inputs(); // b"));
        assert!(!waits(
            "// ima_wait_for_inputs() before reading x\ny(i) = x(i);"
        ));
        assert!(!waits("/* ima_wait_for_inputs(); */ y(i) = x(i);"));
        assert!(!waits("printf(\"ima_wait_for_inputs\\n\");"));
        assert!(!waits("char c = 'i'; // ima_wait_for_inputs"));
        // A prefixed character literal is one: what follows it is code, up to the next
        // (read as a digit separator after `8`, it paired with the next quote).
        assert!(waits(
            "char c = u8' '; ima_wait_for_inputs(); char d = 'x';"
        ));
        // Lines stay where they were.
        assert_eq!(code_only("a // b\nc /* d\ne */ f").lines().count(), 3);
    }

    /// Each macro a `#define` names, once, under a conditional too; an `#if` left open and
    /// an `#endif` that closes nothing by line; a `#` in a comment or a string, none. An
    /// `#undef` of a macro the body did not define above, and a `#define` of imac's names,
    /// by line; what names no macro, nothing.
    #[test]
    fn a_body_s_directives_are_read_from_its_code() {
        let body = "\n#define D 8\n  #  define SQ(x) ((x) * (x))\n#define D 9\n#if D > 4\n#ifdef SQ\n#define UNDER_IF 1\n#endif\n// #define NOT_ONE\nconst char* s = \"#endif\";\n#endif\n#endif\n#ifndef Q\n";
        assert_eq!(
            Directives::of(body),
            Directives {
                defined: vec!["D".into(), "SQ".into(), "UNDER_IF".into()],
                unclosed: vec![12],
                unopened: vec![11],
                ..Directives::default()
            }
        );
        let body = "#undef INFINITY\n#define SQ 1\n#undef SQ\n#define ima_had_D\n#define 8 x\n#define defined\n";
        assert_eq!(
            Directives::of(body),
            Directives {
                defined: vec!["SQ".into()],
                undefined_not_own: vec![(0, "INFINITY".into())],
                defined_imacs: vec![(3, "ima_had_D".into())],
                ..Directives::default()
            }
        );
    }
}
