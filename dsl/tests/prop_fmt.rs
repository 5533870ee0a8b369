//! Property tests of parse, check and fmt on random input: the committed specs mutated at
//! the byte and token level, and random specs from a grammar-aware generator. Nothing may
//! panic, and whatever parses must format to a fixed point that parses to the same tree
//! (spans aside) and keeps every comment.

use ima_dsl::{Source, fmt, syntax};
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::sync::LazyLock;

/// The committed specs and checker inputs: the seeds of the mutations.
static SEEDS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut seeds = Vec::new();
    for dir in ["specs", "tests/in", "tests/fmt/in"] {
        let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}")) else {
            continue;
        };
        let mut paths: Vec<_> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
        paths.sort();
        seeds.extend(paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()));
    }
    assert!(!seeds.is_empty(), "no seed specs found");
    seeds
});

/// The syntax tree's debug form with every span blanked out.
fn tree(text: &str) -> Option<String> {
    let debug = format!("{:?}", syntax::parse(text).ok()?);
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug.as_str();
    while let Some(at) = rest.find("Span { start: ") {
        out.push_str(&rest[..at]);
        out.push_str("Span");
        let after = &rest[at..];
        rest = &after[after.find('}').map_or(after.len(), |n| n + 1)..];
    }
    out.push_str(rest);
    Some(out)
}

/// The properties every input must have. `@` is no token of the grammar, so each one in a
/// file that parses sits in a comment, a doc comment or a body: fmt must keep them all.
fn check(text: &str) -> Result<(), TestCaseError> {
    let _ = ima_dsl::compile(&Source::new("prop.ima", text));
    let Some(original) = tree(text) else {
        prop_assert!(fmt::format(text).is_err());
        return Ok(());
    };
    let once = match fmt::format(text) {
        Ok(f) => f,
        Err(d) => {
            return Err(TestCaseError::fail(format!(
                "parses but does not format: {d:?}"
            )));
        }
    };
    prop_assert_eq!(
        tree(&once),
        Some(original),
        "the tree changed; formatted:\n{}",
        once
    );
    let twice = fmt::format(&once).map_err(|d| TestCaseError::fail(format!("{d:?}")))?;
    prop_assert_eq!(&twice, &once, "not idempotent");
    prop_assert_eq!(
        once.matches('@').count(),
        text.matches('@').count(),
        "a comment was lost:\n{}",
        once
    );
    let _ = ima_dsl::compile(&Source::new("prop.ima", once));
    Ok(())
}

/// A small deterministic generator, seeded by proptest.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// Random specs that follow the grammar, with random layout, comments and doc comments.
struct Gen {
    rng: Rng,
    out: String,
    marks: usize,
}

impl Gen {
    fn file(seed: u64) -> String {
        let mut g = Gen {
            rng: Rng(seed | 1),
            out: String::new(),
            marks: 0,
        };
        for _ in 0..g.rng.below(4) {
            g.sep();
            if g.rng.chance(25) {
                g.const_decl()
            } else {
                g.kernel()
            }
        }
        g.sep();
        g.out
    }

    /// Space between tokens: blanks, newlines, or a comment.
    fn sep(&mut self) {
        self.marks += 1;
        let sep = match self.rng.below(12) {
            0..=5 => " ".to_string(),
            6 | 7 => "\n".to_string(),
            8 => "\n\n  ".to_string(),
            9 => format!(" /* @{} */ ", self.marks),
            10 => format!(" // @{}\n", self.marks),
            _ => "\t \n".to_string(),
        };
        self.out.push_str(&sep);
    }

    fn tok(&mut self, t: &str) {
        self.out.push_str(t);
        self.sep();
    }

    fn one_of(&mut self, from: &[&str]) {
        let t = self.rng.pick(from);
        self.tok(t);
    }

    fn docs(&mut self) {
        for _ in 0..self.rng.below(3).saturating_sub(1) {
            let text = self
                .rng
                .pick(&["", " doc", "  indented @", "/ slashes // x", " ///"]);
            self.out.push_str(&format!("///{text}\n"));
            self.sep();
        }
    }

    fn name(&mut self) -> &'static str {
        self.rng.pick(&[
            "B", "H", "S", "D", "N", "K", "M", "x", "y", "row", "_t", "in_", "G",
        ])
    }

    fn expr(&mut self, depth: usize) {
        match if depth == 0 {
            self.rng.below(2)
        } else {
            self.rng.below(7)
        } {
            0 => {
                let n = self.rng.below(300).to_string();
                self.tok(&n);
            }
            1 => {
                let n = self.name();
                self.tok(n);
            }
            2 => {
                self.one_of(&["-", "!"]);
                self.expr(depth - 1);
            }
            3 => {
                self.tok("(");
                self.expr(depth - 1);
                self.tok(")");
            }
            4 => {
                self.one_of(&["ceil", "min", "max", "f"]);
                self.tok("(");
                self.list(depth - 1);
                self.tok(")");
            }
            _ => {
                self.expr(depth - 1);
                let ops = [
                    "||", "&&", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%",
                ];
                self.one_of(&ops);
                self.expr(depth - 1);
            }
        }
    }

    fn list(&mut self, depth: usize) {
        for i in 0..1 + self.rng.below(3) {
            if i > 0 {
                self.tok(",");
            }
            self.expr(depth);
        }
    }

    fn const_decl(&mut self) {
        self.docs();
        self.tok("const");
        let n = self.name();
        self.tok(n);
        self.tok("=");
        self.expr(2);
    }

    fn kernel(&mut self) {
        self.docs();
        self.tok("kernel");
        self.one_of(&["k", "attn", "copy"]);
        if self.rng.chance(40) {
            self.tok("where");
            self.list(3);
        }
        self.tok("{");
        for _ in 0..self.rng.below(8) {
            match self.rng.below(7) {
                0 | 1 => self.tensor(),
                2 => {
                    self.docs();
                    self.tok("param");
                    let n = self.name();
                    self.tok(n);
                    self.tok(":");
                    self.one_of(&["f32", "i32", "f16"]);
                }
                3 => {
                    self.docs();
                    self.tok("shared");
                    self.tok("s");
                    self.tok(":");
                    self.tok("f32");
                    self.tok("[");
                    self.list(2);
                    self.tok("]");
                    if self.rng.chance(30) {
                        self.tok("align");
                        self.tok("(");
                        self.one_of(&["1024", "16", "24"]);
                        self.tok(")");
                    }
                }
                4 => self.launch(),
                5 => {
                    let policy = self.rng.pick(&["empty skip", "empty refuse"]);
                    self.tok(policy);
                }
                _ => self.body(),
            }
        }
        self.tok("}");
    }

    fn tensor(&mut self) {
        self.docs();
        self.one_of(&["in", "out", "inout"]);
        let n = self.name();
        self.tok(n);
        self.tok(":");
        self.one_of(&["f32", "f16", "bf16", "q4", "u8"]);
        self.tok("[");
        self.list(1);
        self.tok("]");
        for _ in 0..self.rng.below(4) {
            match self.rng.below(7) {
                0 => {
                    self.tok("stored");
                    self.tok("[");
                    for i in 0..1 + self.rng.below(3) {
                        if i > 0 {
                            self.tok(",");
                        }
                        let n = self.name();
                        self.tok(n);
                    }
                    self.tok("]");
                }
                1 => self.tok("strided"),
                6 => self.tok("early"),
                4 => {
                    self.tok("values");
                    self.tok("(");
                    if self.rng.chance(30) {
                        self.tok("ascending");
                        self.tok("from");
                        self.expr(1);
                        self.tok("to");
                    } else {
                        self.expr(1);
                        self.tok("..");
                    }
                    self.expr(1);
                    if self.rng.chance(40) {
                        self.tok(",");
                        self.tok("or");
                        self.one_of(&["-1", "0", "-2147483648"]);
                    }
                    self.tok(")");
                }
                2 => {
                    self.tok("align");
                    self.tok("(");
                    self.one_of(&["16", "8", "3"]);
                    self.tok(")");
                }
                5 => {
                    self.tok("tma");
                    self.tok("(");
                    self.one_of(&["128", "64", "7"]);
                    self.tok(",");
                    self.one_of(&["64", "32", "0"]);
                    self.tok(")");
                }
                _ => {
                    self.one_of(&["gptq", "awq", "int8"]);
                    self.tok("(");
                    for i in 0..self.rng.below(3) {
                        if i > 0 {
                            self.tok(",");
                        }
                        self.one_of(&["group", "sym", "zeros"]);
                        if self.rng.chance(50) {
                            self.tok("=");
                            self.expr(1);
                        }
                    }
                    self.tok(")");
                }
            }
        }
    }

    fn launch(&mut self) {
        self.tok("launch");
        if self.rng.chance(70) {
            if self.rng.chance(40) {
                self.tok("blocks");
            }
            self.tok("over");
            self.tok("y");
            self.tok("[");
            for i in 0..1 + self.rng.below(3) {
                if i > 0 {
                    self.tok(",");
                }
                self.one_of(&["i", "j", "_"]);
            }
            self.tok("]");
        } else if self.rng.chance(25) {
            self.tok("persistent");
            self.tok("(");
            self.expr(1);
            self.tok(")");
            self.tok("block");
            self.tok("(");
            self.one_of(&["512", "32, 8", "32 * W"]);
            self.tok(")");
            self.cluster();
        } else {
            self.tok("grid");
            self.tok("(");
            self.list(1);
            self.tok(")");
            self.tok("block");
            self.tok("(");
            self.one_of(&["32", "32, 8", "8, 8, 4", "32, (W + 1) * 2"]);
            self.tok(")");
            self.cluster();
            if self.rng.chance(30) {
                self.tok("resident");
            }
        }
        if self.rng.chance(30) {
            self.tok("threads");
            self.one_of(&["128", "0", "4096", "W * 32"]);
        }
        if self.rng.chance(20) {
            self.tok("min_blocks");
            self.one_of(&["2", "0", "64", "W / 2"]);
        }
    }

    /// `cluster(...)` at times, its extents in and out of range.
    fn cluster(&mut self) {
        if self.rng.chance(25) {
            self.tok("cluster");
            self.tok("(");
            self.one_of(&["2", "4, 1", "2, 2, 2", "0", "16", "W - 2, 1"]);
            self.tok(")");
        }
    }

    fn body(&mut self) {
        let text = self.rng.pick(&[
            "",
            " y(i) = x(i); ",
            "\n        if (i) { y(i) = 0; } // @ }\n    ",
            " const char* s = \"}{\"; char c = '}'; /* { @ */ ",
        ]);
        self.out.push_str("body");
        self.out.push_str(self.rng.pick(&[" ", "", "\n  "]));
        self.out.push('{');
        self.out.push_str(text);
        self.tok("}");
    }
}

/// Splits text into tokens: runs of word characters, runs of blanks, and single others.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for w in chars.windows(2) {
        let ((_, a), (i, b)) = (w[0], w[1]);
        if class(a) != class(b) || class(a) == 2 {
            out.push(&text[start..i]);
            start = i;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// One edit of a seed, from proptest's numbers.
#[derive(Debug, Clone)]
enum Edit {
    DeleteBytes(usize, usize),
    DuplicateBytes(usize, usize),
    SwapBytes(usize, usize, usize),
    DeleteTokens(usize, usize),
    DuplicateToken(usize),
    SwapTokens(usize, usize),
    InsertToken(usize, usize),
}

const INSERTS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "=",
    "_",
    "/",
    "*",
    "-",
    "!",
    "\n",
    " ",
    "//@\n",
    "/*@*/",
    "/*",
    "*/",
    "///@\n",
    "\"",
    "'",
    "kernel",
    "const",
    "where",
    "in",
    "out",
    "inout",
    "param",
    "shared",
    "empty",
    "refuse",
    "launch",
    "over",
    "blocks",
    "grid",
    "block",
    "threads",
    "min_blocks",
    "resident",
    "persistent",
    "cluster",
    "body",
    "stored",
    "strided",
    "early",
    "align",
    "tma",
    "values",
    "ascending",
    "..",
    "gptq",
    "q4",
    "99999999999999999999",
    "0",
    "ceil",
];

fn edit(text: &str, e: &Edit) -> String {
    let b = text.as_bytes();
    let at = |n: usize| if b.is_empty() { 0 } else { n % (b.len() + 1) };
    let bytes: Vec<u8> = match *e {
        Edit::DeleteBytes(s, len) => {
            let s = at(s);
            let e = (s + len % 64).min(b.len());
            [&b[..s], &b[e..]].concat()
        }
        Edit::DuplicateBytes(s, len) => {
            let s = at(s);
            let e = (s + len % 64).min(b.len());
            [&b[..e], &b[s..e], &b[e..]].concat()
        }
        Edit::SwapBytes(x, y, len) => {
            let (x, y) = (at(x).min(at(y)), at(x).max(at(y)));
            let len = (len % 32).min(y - x).min(b.len() - y);
            [
                &b[..x],
                &b[y..y + len],
                &b[x + len..y],
                &b[x..x + len],
                &b[y + len..],
            ]
            .concat()
        }
        _ => {
            let mut t = tokens(text);
            let n = t.len();
            let ix = |i: usize| if n == 0 { 0 } else { i % n };
            match *e {
                Edit::DeleteTokens(i, len) if n > 0 => {
                    let i = ix(i);
                    t.drain(i..(i + len % 4 + 1).min(n));
                }
                Edit::DuplicateToken(i) if n > 0 => t.insert(ix(i), t[ix(i)]),
                Edit::SwapTokens(i, j) if n > 0 => t.swap(ix(i), ix(j)),
                Edit::InsertToken(i, w) => t.insert(
                    if n == 0 { 0 } else { i % (n + 1) },
                    INSERTS[w % INSERTS.len()],
                ),
                _ => {}
            }
            return t.concat();
        }
    };
    String::from_utf8_lossy(&bytes).into_owned()
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let n = any::<usize>;
    let one = prop_oneof![
        1 => (n(), n()).prop_map(|(a, b)| Edit::DeleteBytes(a, b)),
        1 => (n(), n()).prop_map(|(a, b)| Edit::DuplicateBytes(a, b)),
        1 => (n(), n(), n()).prop_map(|(a, b, c)| Edit::SwapBytes(a, b, c)),
        1 => (n(), n()).prop_map(|(a, b)| Edit::DeleteTokens(a, b)),
        1 => n().prop_map(Edit::DuplicateToken),
        1 => (n(), n()).prop_map(|(a, b)| Edit::SwapTokens(a, b)),
        3 => (n(), n()).prop_map(|(a, b)| Edit::InsertToken(a, b)),
    ];
    proptest::collection::vec(one, 1..5)
}

proptest! {
    #![proptest_config(Config { cases: 1000, ..Config::default() })]

    #[test]
    fn mutated_specs(seed in any::<usize>(), edits in edits()) {
        let mut text = SEEDS[seed % SEEDS.len()].clone();
        for e in &edits {
            text = edit(&text, e);
        }
        check(&text)?;
    }

    #[test]
    fn generated_specs(seed in any::<u64>()) {
        let text = Gen::file(seed);
        prop_assert!(syntax::parse(&text).is_ok(), "the generator wrote a spec that does not parse:\n{}", text);
        check(&text)?;
    }
}

#[test]
fn seeds_round_trip() {
    for seed in SEEDS.iter() {
        check(seed).unwrap();
    }
}
