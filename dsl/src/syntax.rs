//! Text to syntax tree: the pest grammar (`ima.pest`) and the walk over its pairs.

use crate::ast::*;
use crate::diag::Diagnostic;
use pest::Parser;
use pest::iterators::{Pair, Pairs};
use pest::pratt_parser::{Assoc, Op, PrattParser};
use std::sync::LazyLock;

#[derive(pest_derive::Parser)]
#[grammar = "ima.pest"]
struct ImaParser;

/// Parses a whole file. A syntax error stops the parse, so it is reported alone.
pub fn parse(text: &str) -> Result<File, Vec<Diagnostic>> {
    let mut pairs = ImaParser::parse(Rule::file, text).map_err(|e| vec![syntax_error(e, text)])?;
    let file = pairs.next().expect("the file rule always yields one pair");
    let mut diags = Vec::new();
    let mut items = Vec::new();
    for pair in file.into_inner() {
        match pair.as_rule() {
            Rule::const_decl => items.push(Item::Const(const_decl(pair, &mut diags))),
            Rule::kernel => items.push(Item::Kernel(kernel(pair, &mut diags))),
            Rule::EOI => {}
            r => unreachable!("grammar yields no {r:?} at file level"),
        }
    }
    if diags.is_empty() {
        Ok(File { items })
    } else {
        Err(diags)
    }
}

fn syntax_error(e: pest::error::Error<Rule>, text: &str) -> Diagnostic {
    let e = e.renamed_rules(rule_name);
    let span = match e.location {
        pest::error::InputLocation::Pos(p) => Span::new(p, p),
        pest::error::InputLocation::Span((a, b)) => Span::new(a, b),
    };
    let message = e.variant.message().into_owned();
    // A body that does not parse fails at its `body`, whatever inside it went wrong.
    let at = &text[span.start.min(text.len())..];
    if let Some(brace) = at.strip_prefix("body").and_then(|rest| rest.find('{')) {
        let open = span.start + "body".len() + brace;
        if let Some((unclosed, what)) = unclosed_in_body(text, open) {
            return Diagnostic::error(
                format!("syntax error: the body holds {what}"),
                unclosed,
                "not closed",
            )
            .with_help(match what.ends_with("never closes") {
                true => "a body's braces are matched outside its comments: close it with `*/`",
                false => {
                    "a body's braces are matched outside its literals: close it, or escape the \
                     quote (`'\\''`, `\"\\\"\"`)"
                }
            });
        }
    }
    let d = Diagnostic::error(format!("syntax error: {message}"), span, message);
    if at.trim().is_empty() {
        d.with_help(
            "the file ends inside a block: a `{` (of a kernel or a body) has no matching `}`",
        )
    } else {
        d
    }
}

/// The first literal or comment of the body whose `{` is at `open` in `text` that does not
/// close (a string or character literal on its line, a `/*` comment at all), read as the
/// grammar reads a body (dsl/src/ima.pest: identifiers and numbers whole, so that `1'000`
/// is a number); None where every one closes, or the body's braces close first.
fn unclosed_in_body(text: &str, open: usize) -> Option<(Span, &'static str)> {
    let bytes = text.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let (mut depth, mut i) = (0usize, open);
    while i < bytes.len() {
        let (c, next) = (bytes[i], bytes.get(i + 1).copied());
        match (c, next) {
            (b'{', _) => depth += 1,
            (b'}', _) => {
                depth -= 1;
                if depth == 0 {
                    return None;
                }
            }
            (b'/', Some(b'/')) => {
                i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
                continue;
            }
            (b'/', Some(b'*')) => match text[i + 2..].find("*/") {
                Some(n) => i += 2 + n + 2,
                None => return Some((Span::new(i, i + 2), "a `/*` comment that never closes")),
            },
            (b'"' | b'\'', _) => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != c && bytes[j] != b'\n' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                if j >= bytes.len() || bytes[j] != c {
                    let what = match c {
                        b'"' => "a string literal that does not close on its line",
                        _ => "a character literal that does not close on its line",
                    };
                    let end = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
                    return Some((Span::new(i, end), what));
                }
                i = j + 1;
                continue;
            }
            (b'0'..=b'9', _) => {
                i += 1;
                while i < bytes.len()
                    && (ident(bytes[i])
                        || bytes[i] == b'.'
                        || (bytes[i] == b'\'' && bytes.get(i + 1).is_some_and(|&b| ident(b))))
                {
                    i += 1;
                }
                continue;
            }
            _ if ident(c) => {
                while i < bytes.len() && ident(bytes[i]) {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// How a grammar rule reads in an "expected ..." message.
fn rule_name(rule: &Rule) -> String {
    match rule {
        Rule::EOI => "end of file",
        Rule::file => "`kernel`, `const` or a `///` doc comment",
        Rule::kernel | Rule::kw_kernel => "`kernel`",
        Rule::const_decl | Rule::kw_const => "`const`",
        Rule::where_clause | Rule::kw_where => "`where`",
        Rule::tensor_arg | Rule::role => "an argument (`in`, `out` or `inout`)",
        Rule::param | Rule::kw_param => "`param`",
        Rule::launch | Rule::kw_launch => "`launch`",
        Rule::launch_over | Rule::blocks => "`over` or `blocks over`",
        Rule::launch_grid | Rule::kw_grid => "`grid(...)`",
        Rule::block_dims | Rule::kw_block => "`block(...)`",
        Rule::resident => "`resident`",
        Rule::cluster | Rule::kw_cluster => "`cluster(...)`",
        Rule::launch_persistent | Rule::kw_persistent => "`persistent(...)`",
        Rule::threads | Rule::kw_threads => "`threads N`",
        Rule::min_blocks | Rule::kw_min_blocks => "`min_blocks N`",
        Rule::launch_index => "an index name or `_`",
        Rule::hole => "`_`",
        Rule::shared | Rule::kw_shared => "`shared`",
        Rule::empty | Rule::kw_empty => "`empty skip` or `empty refuse`",
        Rule::empty_policy => "`skip` or `refuse`",
        Rule::quant | Rule::quant_kind => "a quantization format (`gptq`, `awq`, `int8`)",
        Rule::quant_opt => "a format option",
        Rule::paren => "`(`",
        Rule::kw_over => "`over`",
        Rule::body => "`body { ... }`",
        Rule::body_text => "a body with balanced braces",
        Rule::stored | Rule::kw_stored => "`stored [...]`",
        Rule::strided => "`strided`",
        Rule::early => "`early`",
        Rule::align | Rule::kw_align => "`align(N)`",
        Rule::tma | Rule::kw_tma => "`tma(ROWS, COLS)`",
        Rule::values | Rule::kw_values => "`values(...)`",
        Rule::value_range => "a range `lo .. hi`",
        Rule::value_order | Rule::kw_ascending => "`ascending from A to B`",
        Rule::kw_from => "`from`",
        Rule::kw_to => "`to`",
        Rule::sentinel | Rule::kw_or => "`or` and a sentinel value",
        Rule::sentinel_value => "an integer such as -1",
        Rule::doc => "a doc comment",
        Rule::dtype => "an element type",
        Rule::extents | Rule::expr => "an expression",
        Rule::ident => "a name",
        Rule::int => "an integer",
        Rule::call => "a call",
        Rule::or => "`||`",
        Rule::and => "`&&`",
        Rule::eq => "`==`",
        Rule::ne => "`!=`",
        Rule::le => "`<=`",
        Rule::ge => "`>=`",
        Rule::lt => "`<`",
        Rule::gt => "`>`",
        Rule::add => "`+`",
        Rule::sub => "`-`",
        Rule::mul => "`*`",
        Rule::div => "`/`",
        Rule::rem => "`%`",
        Rule::neg => "`-`",
        Rule::not => "`!`",
        other => return format!("{other:?}"),
    }
    .to_string()
}

fn span(pair: &Pair<Rule>) -> Span {
    let s = pair.as_span();
    Span::new(s.start(), s.end())
}

fn ident(pair: Pair<Rule>) -> Ident {
    Ident {
        name: pair.as_str().to_string(),
        span: span(&pair),
    }
}

/// The pairs inside `pair`, without keyword tokens.
fn children(pair: Pair<Rule>) -> impl Iterator<Item = Pair<Rule>> {
    pair.into_inner().filter(|p| {
        !matches!(
            p.as_rule(),
            Rule::kw_const
                | Rule::kw_kernel
                | Rule::kw_where
                | Rule::kw_stored
                | Rule::kw_align
                | Rule::kw_tma
                | Rule::kw_param
                | Rule::kw_launch
                | Rule::kw_over
                | Rule::kw_shared
                | Rule::kw_empty
                | Rule::kw_grid
                | Rule::kw_block
                | Rule::kw_persistent
                | Rule::kw_cluster
                | Rule::kw_threads
                | Rule::kw_min_blocks
                | Rule::kw_values
                | Rule::kw_ascending
                | Rule::kw_from
                | Rule::kw_to
                | Rule::kw_or
        )
    })
}

/// A doc comment's text, less its `///` and one space. A character the generated code
/// cannot hold in it is reported: a control character (but a tab, or the carriage return
/// of a CRLF line end), which Rust refuses bare in a doc comment (a carriage return) and
/// Python in its source (a NUL), and one that changes the text's direction (U+202A to
/// U+202E, U+2066 to U+2069), which rustc's lints deny in a doc comment.
fn doc_text(pair: &Pair<Rule>, diags: &mut Vec<Diagnostic>) -> String {
    let all = pair.as_str();
    let text = all.trim_start_matches("///");
    let text = text.strip_prefix(' ').unwrap_or(text).trim_end();
    let refused = |c: char| {
        (c.is_control() && c != '\t')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    };
    if let Some((at, c)) = text.char_indices().find(|&(_, c)| refused(c)) {
        // `text` is a slice of `all`: its offset in the file is `all`'s and the difference.
        let start = pair.as_span().start() + (text.as_ptr() as usize - all.as_ptr() as usize) + at;
        let what = if c.is_control() {
            "a control character"
        } else {
            "it changes the text's direction"
        };
        diags.push(
            Diagnostic::error(
                format!("a doc comment holds U+{:04X}: {what}", u32::from(c)),
                Span::new(start, start + c.len_utf8()),
                what,
            )
            .with_help(
                "remove it: the generated Rust and Python hold each doc line as written, and cannot hold this",
            ),
        );
    }
    text.to_string()
}

fn const_decl(pair: Pair<Rule>, diags: &mut Vec<Diagnostic>) -> ConstDecl {
    let sp = span(&pair);
    let mut docs = Vec::new();
    let mut name = None;
    let mut value = None;
    for p in children(pair) {
        match p.as_rule() {
            Rule::doc => docs.push(doc_text(&p, diags)),
            Rule::ident => name = Some(ident(p)),
            Rule::expr => value = Some(expr(p, diags)),
            r => unreachable!("const has no {r:?}"),
        }
    }
    ConstDecl {
        docs,
        name: name.expect("grammar: const has a name"),
        value: value.expect("grammar: const has a value"),
        span: sp,
    }
}

fn kernel(pair: Pair<Rule>, diags: &mut Vec<Diagnostic>) -> Kernel {
    let sp = span(&pair);
    let mut docs = Vec::new();
    let mut name = None;
    let mut constraints = Vec::new();
    let mut members = Vec::new();
    for p in children(pair) {
        match p.as_rule() {
            Rule::doc => docs.push(doc_text(&p, diags)),
            Rule::ident => name = Some(ident(p)),
            Rule::where_clause => {
                constraints.extend(children(p).map(|e| expr(e, diags)));
            }
            Rule::tensor_arg => members.push(Member::Tensor(Box::new(tensor_arg(p, diags)))),
            Rule::param => members.push(Member::Param(param(p, diags))),
            Rule::shared => members.push(Member::Shared(shared(p, diags))),
            Rule::empty => {
                let sp = span(&p);
                let policy = match children(p).next().map(|x| x.as_str()) {
                    Some("refuse") => EmptyPolicy::Refuse,
                    _ => EmptyPolicy::Skip,
                };
                members.push(Member::Empty(policy, sp));
            }
            Rule::launch => members.push(Member::Launch(launch(p, diags))),
            Rule::body => members.push(Member::Body(body(p))),
            r => unreachable!("kernel has no {r:?}"),
        }
    }
    Kernel {
        docs,
        name: name.expect("grammar: kernel has a name"),
        constraints,
        members,
        span: sp,
    }
}

fn tensor_arg(pair: Pair<Rule>, diags: &mut Vec<Diagnostic>) -> TensorArg {
    let sp = span(&pair);
    let mut docs = Vec::new();
    let mut role = None;
    let mut name = None;
    let mut dtype = None;
    let mut extents = Vec::new();
    let mut stored = None;
    let mut strided = None;
    let mut early = None;
    let mut align = None;
    let mut tma = None;
    let mut quant = None;
    let mut values = None;
    for p in children(pair) {
        match p.as_rule() {
            Rule::doc => docs.push(doc_text(&p, diags)),
            Rule::role => {
                role = Some(match p.as_str() {
                    "in" => Role::In,
                    "out" => Role::Out,
                    _ => Role::InOut,
                })
            }
            Rule::ident => name = Some(ident(p)),
            Rule::dtype => dtype = Some(ident(p)),
            Rule::extents => extents = children(p).map(|e| expr(e, diags)).collect(),
            Rule::stored => stored = Some(children(p).map(ident).collect()),
            Rule::strided => strided = Some(span(&p)),
            Rule::early => early = Some(span(&p)),
            Rule::align => {
                let n = children(p).next().expect("grammar: align has a number");
                align = Some((int_value(&n, diags) as u64, span(&n)));
            }
            Rule::tma => {
                let sp = span(&p);
                let mut n = children(p).map(|n| int_value(&n, diags) as u64);
                let mut next = || n.next().expect("grammar: tma has two numbers");
                let (rows, cols) = (next(), next());
                tma = Some(Tma {
                    rows,
                    cols,
                    span: sp,
                });
            }
            Rule::quant => quant = Some(quant_format(p, diags)),
            Rule::values => values = Some(Box::new(value_contract(p, diags))),
            r => unreachable!("tensor argument has no {r:?}"),
        }
    }
    TensorArg {
        docs,
        role: role.expect("grammar: argument has a role"),
        name: name.expect("grammar: argument has a name"),
        dtype: dtype.expect("grammar: argument has a type"),
        extents,
        stored,
        strided,
        early,
        align,
        tma,
        quant,
        values,
        span: sp,
    }
}

fn value_contract(pair: Pair<Rule>, diags: &mut Vec<Diagnostic>) -> Values {
    let sp = span(&pair);
    let mut kind = None;
    let mut sentinel = None;
    for p in children(pair) {
        match p.as_rule() {
            Rule::value_range | Rule::value_order => {
                let ascending = p.as_rule() == Rule::value_order;
                let mut bounds = children(p).map(|e| expr(e, diags));
                let (a, b) = (
                    bounds
                        .next()
                        .expect("grammar: a value range has two bounds"),
                    bounds
                        .next()
                        .expect("grammar: a value range has two bounds"),
                );
                kind = Some(if ascending {
                    ValuesKind::Ascending { first: a, last: b }
                } else {
                    ValuesKind::Range { lo: a, hi: b }
                });
            }
            Rule::sentinel => {
                let v = children(p).next().expect("grammar: a sentinel has a value");
                sentinel = Some((int_value(&v, diags), span(&v)));
            }
            r => unreachable!("values(...) has no {r:?}"),
        }
    }
    Values {
        kind: kind.expect("grammar: values(...) has a range or an order"),
        sentinel,
        span: sp,
    }
}

fn quant_format(pair: Pair<Rule>, diags: &mut Vec<Diagnostic>) -> Quant {
    let sp = span(&pair);
    let mut inner = pair.into_inner();
    let kind = ident(inner.next().expect("grammar: quant has a kind"));
    let options = inner
        .map(|opt| {
            let mut parts = opt.into_inner();
            QuantOption {
                name: ident(parts.next().expect("grammar: option has a name")),
                value: parts.next().map(|e| expr(e, diags)),
            }
        })
        .collect();
    Quant {
        kind,
        options,
        span: sp,
    }
}

fn shared(pair: Pair<Rule>, diags: &mut Vec<Diagnostic>) -> Shared {
    let sp = span(&pair);
    let mut docs = Vec::new();
    let mut name = None;
    let mut dtype = None;
    let mut extents = Vec::new();
    let mut align = None;
    for p in children(pair) {
        match p.as_rule() {
            Rule::doc => docs.push(doc_text(&p, diags)),
            Rule::ident => name = Some(ident(p)),
            Rule::dtype => dtype = Some(ident(p)),
            Rule::extents => extents = children(p).map(|e| expr(e, diags)).collect(),
            Rule::align => {
                let n = children(p).next().expect("grammar: align has a number");
                align = Some((int_value(&n, diags) as u64, span(&n)));
            }
            r => unreachable!("shared has no {r:?}"),
        }
    }
    Shared {
        docs,
        name: name.expect("grammar: shared has a name"),
        dtype: dtype.expect("grammar: shared has a type"),
        extents,
        align,
        span: sp,
    }
}

fn param(pair: Pair<Rule>, diags: &mut Vec<Diagnostic>) -> Param {
    let sp = span(&pair);
    let mut docs = Vec::new();
    let mut idents = Vec::new();
    for p in children(pair) {
        match p.as_rule() {
            Rule::doc => docs.push(doc_text(&p, diags)),
            Rule::ident | Rule::dtype => idents.push(ident(p)),
            r => unreachable!("param has no {r:?}"),
        }
    }
    let [name, dtype] = <[Ident; 2]>::try_from(idents).expect("grammar: param has name and type");
    Param {
        docs,
        name,
        dtype,
        span: sp,
    }
}

fn launch(pair: Pair<Rule>, diags: &mut Vec<Diagnostic>) -> Launch {
    // From `launch` to its last token: the pair's own span runs on over the whitespace and
    // comments that pest skipped while looking for `threads` or `min_blocks`.
    let mut sp = span(&pair);
    let mut kind = None;
    let mut threads = None;
    let mut min_blocks = None;
    for p in children(pair) {
        sp.end = p.as_span().end();
        match p.as_rule() {
            Rule::launch_over => {
                let mut blocks = false;
                let mut arg = None;
                let mut indices = Vec::new();
                for q in children(p) {
                    match q.as_rule() {
                        Rule::blocks => blocks = true,
                        Rule::ident => arg = Some(ident(q)),
                        Rule::launch_index => {
                            let i = q.into_inner().next().expect("grammar: index or `_`");
                            indices.push((i.as_rule() == Rule::ident).then(|| ident(i)));
                        }
                        r => unreachable!("launch over has no {r:?}"),
                    }
                }
                kind = Some(LaunchKind::Over {
                    blocks,
                    arg: arg.expect("grammar: launch names an argument"),
                    indices,
                });
            }
            Rule::launch_grid | Rule::launch_persistent => {
                let mut grid = Vec::new();
                let mut block = Vec::new();
                let mut cluster = None;
                let mut resident = if p.as_rule() == Rule::launch_persistent {
                    Resident::AtMost
                } else {
                    Resident::No
                };
                for q in children(p) {
                    match q.as_rule() {
                        Rule::expr => grid.push(expr(q, diags)),
                        Rule::block_dims => block = children(q).map(|n| expr(n, diags)).collect(),
                        Rule::resident => resident = Resident::Whole,
                        Rule::cluster => {
                            let sp = span(&q);
                            let dims = children(q).map(|n| expr(n, diags)).collect();
                            cluster = Some((dims, sp));
                        }
                        r => unreachable!("launch grid has no {r:?}"),
                    }
                }
                kind = Some(LaunchKind::Grid {
                    grid,
                    block,
                    cluster,
                    resident,
                });
            }
            Rule::threads => {
                let n = children(p).next().expect("grammar: threads has a number");
                threads = Some(expr(n, diags));
            }
            Rule::min_blocks => {
                let n = children(p)
                    .next()
                    .expect("grammar: min_blocks has a number");
                min_blocks = Some(expr(n, diags));
            }
            r => unreachable!("launch has no {r:?}"),
        }
    }
    Launch {
        kind: kind.expect("grammar: launch has a form"),
        threads,
        min_blocks,
        span: sp,
    }
}

fn body(pair: Pair<Rule>) -> Body {
    let text = pair
        .into_inner()
        .find(|p| p.as_rule() == Rule::body_text)
        .expect("grammar: body has text");
    Body {
        text: text.as_str().to_string(),
        span: span(&text),
    }
}

fn int_value(pair: &Pair<Rule>, diags: &mut Vec<Diagnostic>) -> i64 {
    pair.as_str().parse().unwrap_or_else(|_| {
        diags.push(
            Diagnostic::error("integer too large", span(pair), "does not fit in 64 bits")
                .with_help(format!("integers in specs are at most {}", i64::MAX)),
        );
        0
    })
}

static PRATT: LazyLock<PrattParser<Rule>> = LazyLock::new(|| {
    PrattParser::new()
        .op(Op::infix(Rule::or, Assoc::Left))
        .op(Op::infix(Rule::and, Assoc::Left))
        .op(Op::infix(Rule::eq, Assoc::Left) | Op::infix(Rule::ne, Assoc::Left))
        .op(Op::infix(Rule::lt, Assoc::Left)
            | Op::infix(Rule::le, Assoc::Left)
            | Op::infix(Rule::gt, Assoc::Left)
            | Op::infix(Rule::ge, Assoc::Left))
        .op(Op::infix(Rule::add, Assoc::Left) | Op::infix(Rule::sub, Assoc::Left))
        .op(Op::infix(Rule::mul, Assoc::Left)
            | Op::infix(Rule::div, Assoc::Left)
            | Op::infix(Rule::rem, Assoc::Left))
        .op(Op::prefix(Rule::neg) | Op::prefix(Rule::not))
});

/// The most operators, parentheses and calls one expression may hold. Real specs use a
/// handful; the bound keeps every recursive pass over the tree (checks, evaluation,
/// printing, codegen) far from the stack's end, where a chain of 200,000 `+` overflowed it.
const MAX_EXPR_NODES: usize = 256;

/// An expression of the spec (a whole one, not a part of another), refused with a
/// diagnostic when it holds more than `MAX_EXPR_NODES` operators, parentheses and calls.
fn expr(pair: Pair<Rule>, diags: &mut Vec<Diagnostic>) -> Expr {
    // `flatten` walks the pairs without recursion.
    let nodes = pair
        .clone()
        .into_inner()
        .flatten()
        .filter(|p| !matches!(p.as_rule(), Rule::int | Rule::ident | Rule::expr))
        .count();
    if nodes > MAX_EXPR_NODES {
        let sp = span(&pair);
        diags.push(
            Diagnostic::error(
                "expression too large",
                sp,
                format!("{nodes} operators, parentheses and calls"),
            )
            .with_help(format!(
                "an expression holds at most {MAX_EXPR_NODES}: name its parts with `const`"
            )),
        );
        return Expr {
            kind: ExprKind::Int(0),
            span: sp,
        };
    }
    expr_tree(pair, diags)
}

/// The tree of an expression whose size `expr` has checked.
fn expr_tree(pair: Pair<Rule>, diags: &mut Vec<Diagnostic>) -> Expr {
    expr_pairs(pair.into_inner(), diags)
}

fn expr_pairs(pairs: Pairs<Rule>, diags: &mut Vec<Diagnostic>) -> Expr {
    PRATT
        .map_primary(|p| match p.as_rule() {
            Rule::int => Expr {
                kind: ExprKind::Int(int_value(&p, diags)),
                span: span(&p),
            },
            Rule::ident => Expr {
                kind: ExprKind::Name(p.as_str().to_string()),
                span: span(&p),
            },
            Rule::paren => {
                let sp = span(&p);
                let inner = p
                    .into_inner()
                    .next()
                    .expect("grammar: parentheses hold an expression");
                // Keep the parentheses in the span, so messages underline what was written.
                Expr {
                    span: sp,
                    ..expr_tree(inner, diags)
                }
            }
            Rule::call => {
                let sp = span(&p);
                let mut inner = p.into_inner();
                let name = ident(inner.next().expect("grammar: call has a name"));
                let args = inner.map(|a| expr_pairs(a.into_inner(), diags)).collect();
                Expr {
                    kind: ExprKind::Call(name, args),
                    span: sp,
                }
            }
            r => unreachable!("expression primary has no {r:?}"),
        })
        .map_prefix(|op, rhs| {
            let sp = Span::new(span(&op).start, rhs.span.end);
            let kind = match op.as_rule() {
                Rule::neg => ExprKind::Neg(Box::new(rhs)),
                _ => ExprKind::Not(Box::new(rhs)),
            };
            Expr { kind, span: sp }
        })
        .map_infix(|lhs, op, rhs| {
            let op = match op.as_rule() {
                Rule::or => BinOp::Or,
                Rule::and => BinOp::And,
                Rule::eq => BinOp::Eq,
                Rule::ne => BinOp::Ne,
                Rule::lt => BinOp::Lt,
                Rule::le => BinOp::Le,
                Rule::gt => BinOp::Gt,
                Rule::ge => BinOp::Ge,
                Rule::add => BinOp::Add,
                Rule::sub => BinOp::Sub,
                Rule::mul => BinOp::Mul,
                Rule::div => BinOp::Div,
                _ => BinOp::Rem,
            };
            let sp = Span::new(lhs.span.start, rhs.span.end);
            Expr {
                kind: ExprKind::Bin(op, Box::new(lhs), Box::new(rhs)),
                span: sp,
            }
        })
        .parse(pairs)
}

#[cfg(test)]
mod tests {
    use super::parse;
    use crate::ast::{Item, Member};

    /// The text of the body of the one kernel of `spec`.
    fn body_of(spec: &str) -> String {
        let file = parse(spec).unwrap_or_else(|d| panic!("{d:?}"));
        let Some(Item::Kernel(k)) = file.items.first() else {
            panic!("no kernel");
        };
        (k.members.iter())
            .find_map(|m| match m {
                Member::Body(b) => Some(b.text.clone()),
                _ => None,
            })
            .expect("a body")
    }

    /// A `'` inside a number is C++14's digit separator, and one after a prefix starts a
    /// character literal, whose brace does not count: the body is read whole.
    #[test]
    fn a_body_reads_digit_separators_and_prefixed_characters() {
        // A single separator on its line was an unclosed character literal.
        let text = " y(i) = 1'000 + x(i);\n unsigned h = 0xFF'FF; char c = u8'{'; y(i) += h + c; ";
        let spec = format!(
            "kernel k {{\n    in x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body {{{text}}}\n}}\n"
        );
        assert_eq!(body_of(&spec), text);
    }

    /// A literal or comment in a body that does not close is named where it starts; the
    /// grammar's own error stood at `body {`.
    #[test]
    fn an_unclosed_literal_in_a_body_is_named_where_it_starts() {
        let spec = |line: &str| {
            format!(
                "kernel k {{\n    in x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body {{\n{line}\n    }}\n}}\n"
            )
        };
        for (line, message, at) in [
            (
                "  s = \"ab;",
                "a string literal that does not close on its line",
                "\"ab;",
            ),
            (
                "  c = 'a; y(i) = x(i);",
                "a character literal that does not close on its line",
                "'a; y(i) = x(i);",
            ),
            (
                "  /* y(i) = x(i);",
                "a `/*` comment that never closes",
                "/*",
            ),
        ] {
            let text = spec(line);
            let d = &parse(&text).unwrap_err()[0];
            assert_eq!(
                d.message,
                format!("syntax error: the body holds {message}"),
                "{line}"
            );
            assert_eq!(&text[d.span.range()], at, "{line}");
        }
    }

    /// A byte order mark before the first item is no part of the spec; a stray token at
    /// the file's level is met by what may stand there, not by the grammar's rule name.
    #[test]
    fn a_byte_order_mark_is_skipped_and_a_stray_token_named() {
        let spec = "kernel k {\n    in x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body { y(i) = x(i); }\n}\n";
        assert_eq!(body_of(&format!("\u{feff}{spec}")), " y(i) = x(i); ");
        let stray = parse("}\n").unwrap_err();
        assert_eq!(
            stray[0].message,
            "syntax error: expected `kernel`, `const` or a `///` doc comment"
        );
    }
}
