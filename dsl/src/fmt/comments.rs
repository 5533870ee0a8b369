//! The `//` and `/* */` comments of a `.ima` file. The grammar treats them as whitespace,
//! so the syntax tree has none: `imac fmt` finds them again with this scanner.

use std::ops::Range;

/// A comment's byte range in the source; a line comment's range ends before trailing
/// whitespace and the newline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comment {
    pub start: usize,
    pub end: usize,
}

impl Comment {
    pub fn text(self, source: &str) -> &str {
        source.get(self.start..self.end).unwrap_or_default()
    }
}

/// The comments of a file that parsed, in source order. `bodies` are the body texts
/// (sorted and disjoint), CUDA C that is kept verbatim and not scanned. `///` doc
/// comments belong to the syntax tree and are skipped.
pub fn scan(source: &str, bodies: &[Range<usize>]) -> Vec<Comment> {
    let b = source.as_bytes();
    let mut comments = Vec::new();
    let mut bodies = bodies.iter().peekable();
    let mut i = 0;
    while i < b.len() {
        while bodies.next_if(|r| r.end <= i).is_some() {}
        if let Some(r) = bodies.peek()
            && r.start <= i
        {
            i = r.end;
            continue;
        }
        match (b[i], b.get(i + 1), b.get(i + 2)) {
            (b'/', Some(b'/'), next) => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |n| i + n);
                if next != Some(&b'/') {
                    let text = source.get(i..end).unwrap_or_default().trim_end();
                    comments.push(Comment {
                        start: i,
                        end: i + text.len(),
                    });
                }
                i = end;
            }
            (b'/', Some(b'*'), _) => {
                let end = source
                    .get(i + 2..)
                    .and_then(|rest| rest.find("*/"))
                    .map_or(b.len(), |n| i + 2 + n + 2);
                comments.push(Comment { start: i, end });
                i = end;
            }
            _ => i += 1,
        }
    }
    comments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(source: &str, bodies: &[Range<usize>]) -> Vec<String> {
        scan(source, bodies)
            .iter()
            .map(|c| c.text(source).to_string())
            .collect()
    }

    #[test]
    fn finds_line_and_block_comments_but_not_docs() {
        let s = "/// doc // not a comment\nconst A = 1 // one  \n/* two\n */ const B = 2 /// x\n";
        assert_eq!(texts(s, &[]), ["// one", "/* two\n */"]);
    }

    #[test]
    fn skips_bodies() {
        let s = "body { // inside\n } // outside";
        let open = s.find('{').unwrap() + 1;
        let close = s.rfind('}').unwrap();
        assert_eq!(
            texts(s, std::slice::from_ref(&(open..close))),
            ["// outside"]
        );
    }

    #[test]
    fn an_unclosed_block_comment_runs_to_the_end() {
        assert_eq!(texts("a /* b", &[]), ["/* b"]);
    }
}
