//! `imac fmt`: the canonical layout of a `.ima` file.
//!
//! One blank line between items; members indented four spaces, one a line, roles padded to
//! the kernel's longest; expressions as [`Expr`]'s `Display` prints them; attributes in the
//! order `stored`, `strided`, `align`, `tma`, quantization, `values`, `early`. Bodies are kept byte for byte. Every
//! comment is kept: one on a line of its own stays above the member or item that follows it
//! (single blank lines around it are kept too), one after code stays at the end of that
//! line, and one inside a member or a kernel's header moves above it.

mod comments;

use crate::ast::*;
use crate::diag::Diagnostic;
use crate::syntax;
use comments::Comment;
use std::ops::Range;

const INDENT: &str = "    ";

/// Formats a whole file; a file that does not parse is returned as its diagnostics.
pub fn format(text: &str) -> Result<String, Vec<Diagnostic>> {
    let file = syntax::parse(text)?;
    let bodies: Vec<Range<usize>> = kernels(&file)
        .flat_map(|k| &k.members)
        .filter_map(|m| {
            if let Member::Body(b) = m {
                Some(b.span.range())
            } else {
                None
            }
        })
        .collect();
    let all = comments::scan(text, &bodies);

    // A kernel's members form a level of their own, between its braces.
    let inner: Vec<Range<usize>> = file
        .items
        .iter()
        .map(|item| match item {
            Item::Kernel(k) => header_brace(text, k, &all) + 1..k.span.end.saturating_sub(1),
            Item::Const(_) => 0..0,
        })
        .collect();
    let inside = |c: &Comment, r: &Range<usize>| r.start <= c.start && c.start < r.end;
    let top: Vec<Comment> = all
        .iter()
        .filter(|c| !inner.iter().any(|r| inside(c, r)))
        .copied()
        .collect();
    let ranges: Vec<Range<usize>> = file
        .items
        .iter()
        .map(|i| code(text, &all, item_span(i).range()))
        .collect();
    let level = Level::place(text, &top, &ranges, None);
    Ok(
        level.print(text, &ranges, "", true, |i| match &file.items[i] {
            Item::Const(c) => const_decl(c),
            Item::Kernel(k) => {
                let mine: Vec<Comment> = all
                    .iter()
                    .filter(|c| inside(c, &inner[i]))
                    .copied()
                    .collect();
                kernel(text, k, inner[i].start, &mine)
            }
        }),
    )
}

fn kernels(file: &File) -> impl Iterator<Item = &Kernel> {
    file.items.iter().filter_map(|i| {
        if let Item::Kernel(k) = i {
            Some(k)
        } else {
            None
        }
    })
}

fn item_span(item: &Item) -> Span {
    match item {
        Item::Const(c) => c.span,
        Item::Kernel(k) => k.span,
    }
}

/// A node's range without the whitespace and comments that pest's spans take in after
/// the last token (a rule ending in `x*` or `x?` skips them while looking for another `x`).
fn code(text: &str, comments: &[Comment], r: Range<usize>) -> Range<usize> {
    let mut end = r.end;
    loop {
        end = text
            .get(r.start..end)
            .map_or(r.start, |s| r.start + s.trim_end().len());
        match comments.iter().find(|c| c.end == end && c.start >= r.start) {
            Some(c) => end = c.start,
            None => return r.start..end,
        }
    }
}

/// The `{` that opens a kernel's members: the first one after its header that no comment
/// holds.
fn header_brace(text: &str, k: &Kernel, comments: &[Comment]) -> usize {
    let from = k.constraints.last().map_or(k.name.span.end, |c| c.span.end);
    let in_comment = |p: usize| comments.iter().any(|c| c.start <= p && p < c.end);
    text.get(from..)
        .and_then(|rest| {
            rest.match_indices('{')
                .map(|(n, _)| from + n)
                .find(|&p| !in_comment(p))
        })
        .unwrap_or(from)
}

/// The comments of one level (the file, or a kernel's members), each assigned a place.
struct Level {
    /// Per element: comments on lines of their own before it, or inside it.
    lead: Vec<Vec<Comment>>,
    /// Per element: comments after its code, on the line where it ends.
    trail: Vec<Vec<Comment>>,
    /// After the level's opening line (a kernel's header) on that same line.
    opener_trail: Vec<Comment>,
    /// After the last element, on lines of their own.
    footer: Vec<Comment>,
}

impl Level {
    /// `elements` are the source ranges of the level's elements, in order; `opener` is
    /// where the line that opens the level ends in the source, if there is one.
    fn place(
        text: &str,
        comments: &[Comment],
        elements: &[Range<usize>],
        opener: Option<usize>,
    ) -> Level {
        let n = elements.len();
        let mut level = Level {
            lead: vec![Vec::new(); n],
            trail: vec![Vec::new(); n],
            opener_trail: Vec::new(),
            footer: Vec::new(),
        };
        for &c in comments {
            let next = elements.partition_point(|e| e.end <= c.start);
            if next < n && elements[next].start <= c.start {
                level.lead[next].push(c);
                continue;
            }
            let prev_end = if next == 0 {
                opener
            } else {
                Some(elements[next - 1].end)
            };
            let same_line =
                prev_end.is_some_and(|p| text.get(p..c.start).is_some_and(|s| !s.contains('\n')));
            match (same_line, next) {
                (true, 0) => level.opener_trail.push(c),
                (true, _) => level.trail[next - 1].push(c),
                (false, _) if next < n => level.lead[next].push(c),
                (false, _) => level.footer.push(c),
            }
        }
        level
    }

    /// Prints the level's elements with their comments. A blank line always follows an
    /// element where `blank_after_element`; elsewhere one is kept where the source had one.
    fn print(
        &self,
        text: &str,
        elements: &[Range<usize>],
        indent: &str,
        blank_after_element: bool,
        mut element: impl FnMut(usize) -> String,
    ) -> String {
        let mut out = String::new();
        // End of the previous entry in the source, and whether it was an element.
        let mut prev: Option<(usize, bool)> = None;
        let separate = |out: &mut String, prev: Option<(usize, bool)>, start: usize| {
            if let Some((end, was_element)) = prev {
                let blank_in_source = text
                    .get(end..start)
                    .is_some_and(|s| s.matches('\n').count() >= 2);
                if (was_element && blank_after_element) || blank_in_source {
                    out.push('\n');
                }
            }
        };
        for (i, range) in elements.iter().enumerate() {
            for group in lines(text, &self.lead[i]) {
                separate(&mut out, prev, group[0].start);
                out.push_str(indent);
                out.push_str(&joined(text, group));
                out.push('\n');
                prev = group.last().map(|c| (c.end, false));
            }
            separate(&mut out, prev, range.start);
            out.push_str(&element(i));
            out.push_str(&trailing(text, &self.trail[i]));
            out.push('\n');
            prev = Some((self.trail[i].last().map_or(range.end, |c| c.end), true));
        }
        for group in lines(text, &self.footer) {
            separate(&mut out, prev, group[0].start);
            out.push_str(indent);
            out.push_str(&joined(text, group));
            out.push('\n');
            prev = group.last().map(|c| (c.end, false));
        }
        out
    }
}

/// Splits comments into the runs that share a source line.
fn lines<'c>(text: &str, comments: &'c [Comment]) -> Vec<&'c [Comment]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=comments.len() {
        let new_line = comments.get(i).is_none_or(|c| {
            text.get(comments[i - 1].end..c.start)
                .is_none_or(|s| s.contains('\n'))
        });
        if new_line {
            out.push(&comments[start..i]);
            start = i;
        }
    }
    out
}

fn joined(text: &str, comments: &[Comment]) -> String {
    comments
        .iter()
        .map(|c| c.text(text))
        .collect::<Vec<_>>()
        .join(" ")
}

fn trailing(text: &str, comments: &[Comment]) -> String {
    if comments.is_empty() {
        String::new()
    } else {
        format!(" {}", joined(text, comments))
    }
}

fn docs(indent: &str, docs: &[String]) -> String {
    docs.iter()
        .map(|d| {
            if d.is_empty() {
                format!("{indent}///\n")
            } else {
                format!("{indent}/// {d}\n")
            }
        })
        .collect()
}

fn list<T: ToString>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn const_decl(c: &ConstDecl) -> String {
    format!("{}const {} = {}", docs("", &c.docs), c.name.name, c.value)
}

/// A kernel, from its docs to its closing brace; `open` is just past its `{`, and
/// `comments` are those between its braces.
fn kernel(text: &str, k: &Kernel, open: usize, comments: &[Comment]) -> String {
    let mut out = docs("", &k.docs);
    out.push_str("kernel ");
    out.push_str(&k.name.name);
    if !k.constraints.is_empty() {
        out.push_str(" where ");
        out.push_str(&list(&k.constraints));
    }
    out.push_str(" {");
    let ranges: Vec<Range<usize>> = k
        .members
        .iter()
        .map(|m| code(text, comments, member_range(text, m)))
        .collect();
    let level = Level::place(text, comments, &ranges, Some(open));
    out.push_str(&trailing(text, &level.opener_trail));
    out.push('\n');
    let role_width = k
        .members
        .iter()
        .filter_map(|m| {
            if let Member::Tensor(t) = m {
                Some(t.role.keyword().len())
            } else {
                None
            }
        })
        .max()
        .unwrap_or(0);
    out.push_str(&level.print(text, &ranges, INDENT, false, |i| {
        member(&k.members[i], role_width)
    }));
    out.push('}');
    out
}

/// A member's source range, docs included; a body's runs from `body` to its `}`.
fn member_range(text: &str, m: &Member) -> Range<usize> {
    match m {
        Member::Tensor(t) => t.span.range(),
        Member::Param(p) => p.span.range(),
        Member::Shared(s) => s.span.range(),
        Member::Empty(_, span) => span.range(),
        Member::Launch(l) => l.span.range(),
        Member::Body(b) => {
            let brace = b.span.start.saturating_sub(1);
            let keyword = text
                .get(..brace)
                .map_or(0, |s| s.trim_end().len().saturating_sub("body".len()));
            keyword..b.span.end + 1
        }
    }
}

fn member(m: &Member, role_width: usize) -> String {
    match m {
        Member::Tensor(t) => format!("{}{INDENT}{}", docs(INDENT, &t.docs), tensor(t, role_width)),
        Member::Param(p) => format!(
            "{}{INDENT}param {}: {}",
            docs(INDENT, &p.docs),
            p.name.name,
            p.dtype.name
        ),
        Member::Shared(s) => format!(
            "{}{INDENT}shared {}: {}[{}]{}",
            docs(INDENT, &s.docs),
            s.name.name,
            s.dtype.name,
            list(&s.extents),
            s.align
                .map_or(String::new(), |(n, _)| format!(" align({n})"))
        ),
        Member::Empty(EmptyPolicy::Skip, _) => format!("{INDENT}empty skip"),
        Member::Empty(EmptyPolicy::Refuse, _) => format!("{INDENT}empty refuse"),
        Member::Launch(l) => format!("{INDENT}launch {}", launch(l)),
        Member::Body(b) => format!("{INDENT}body {{{}}}", b.text),
    }
}

fn tensor(t: &TensorArg, role_width: usize) -> String {
    let mut s = format!(
        "{:<role_width$} {}: {}[{}]",
        t.role.keyword(),
        t.name.name,
        t.dtype.name,
        list(&t.extents)
    );
    if let Some(order) = &t.stored {
        let names: Vec<&str> = order.iter().map(|i| i.name.as_str()).collect();
        s.push_str(&format!(" stored [{}]", names.join(", ")));
    }
    if t.strided.is_some() {
        s.push_str(" strided");
    }
    if let Some((n, _)) = t.align {
        s.push_str(&format!(" align({n})"));
    }
    if let Some(b) = &t.tma {
        s.push_str(&format!(" tma({}, {})", b.rows, b.cols));
    }
    if let Some(q) = &t.quant {
        let options: Vec<String> = q
            .options
            .iter()
            .map(|o| match &o.value {
                Some(v) => format!("{} = {v}", o.name.name),
                None => o.name.name.clone(),
            })
            .collect();
        s.push_str(&format!(" {}({})", q.kind.name, options.join(", ")));
    }
    if let Some(v) = &t.values {
        s.push_str(&format!(" values({v})"));
    }
    if t.early.is_some() {
        s.push_str(" early");
    }
    s
}

fn launch(l: &Launch) -> String {
    let mut s = match &l.kind {
        LaunchKind::Over {
            blocks,
            arg,
            indices,
        } => {
            let indices: Vec<&str> = indices
                .iter()
                .map(|i| i.as_ref().map_or("_", |i| i.name.as_str()))
                .collect();
            let blocks = if *blocks { "blocks " } else { "" };
            format!("{blocks}over {}[{}]", arg.name, indices.join(", "))
        }
        LaunchKind::Grid {
            grid,
            block,
            cluster,
            resident,
        } => {
            let (grid, block) = (list(grid), list(block));
            let cluster = cluster.as_ref().map_or(String::new(), |(dims, _)| {
                format!(" cluster({})", list(dims))
            });
            match resident {
                Resident::No => format!("grid({grid}) block({block}){cluster}"),
                Resident::Whole => format!("grid({grid}) block({block}){cluster} resident"),
                Resident::AtMost => format!("persistent({grid}) block({block}){cluster}"),
            }
        }
    };
    if let Some(n) = &l.threads {
        s.push_str(&format!(" threads {n}"));
    }
    if let Some(n) = &l.min_blocks {
        s.push_str(&format!(" min_blocks {n}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::format;

    fn fmt(s: &str) -> String {
        format(s).unwrap_or_else(|d| panic!("{d:?}"))
    }

    #[test]
    fn lays_out_members_and_keeps_the_body() {
        let messy = "kernel  k where D%8==0,(D<=256) {in x:f32[N,D]align(16)  stored[D,N]\n inout y : f32[N,D]\nlaunch over y[i,_] threads 64   min_blocks  2 body {  a;\n  b; }}";
        let want = "kernel k where D % 8 == 0, D <= 256 {\n    in    x: f32[N, D] stored [D, N] align(16)\n    inout y: f32[N, D]\n    launch over y[i, _] threads 64 min_blocks 2\n    body {  a;\n  b; }\n}\n";
        assert_eq!(fmt(messy), want);
        assert_eq!(fmt(want), want);
    }

    #[test]
    fn writes_a_resident_grid_after_its_block_and_a_persistent_one_as_such() {
        let messy =
            "kernel k{inout f:i32[N]\nlaunch grid( N )block(32,4)   resident min_blocks 1 body {}}";
        let want = "kernel k {\n    inout f: i32[N]\n    launch grid(N) block(32, 4) resident min_blocks 1\n    body {}\n}\n";
        assert_eq!(fmt(messy), want);
        assert_eq!(fmt(want), want);
        let messy = "kernel k{inout f:i32[N]\nlaunch persistent( 2*N )block(512) body {}}";
        let want = "kernel k {\n    inout f: i32[N]\n    launch persistent(2 * N) block(512)\n    body {}\n}\n";
        assert_eq!(fmt(messy), want);
        assert_eq!(fmt(want), want);
    }

    #[test]
    fn writes_the_launch_numbers_as_expressions() {
        let messy = "const W=4\nkernel k{inout f:i32[N]\nlaunch grid( N )block(32,W*2)cluster( W/2 ) min_blocks W-2 body {}}";
        let want = "const W = 4\n\nkernel k {\n    inout f: i32[N]\n    launch grid(N) block(32, W * 2) cluster(W / 2) min_blocks W - 2\n    body {}\n}\n";
        assert_eq!(format(messy).unwrap(), want);
    }

    #[test]
    fn writes_a_cluster_after_the_block_and_before_resident() {
        let messy =
            "kernel k{inout f:i32[N]\nlaunch grid( 4*N,2 )block(128)cluster( 4,1 ) body {}}";
        let want = "kernel k {\n    inout f: i32[N]\n    launch grid(4 * N, 2) block(128) cluster(4, 1)\n    body {}\n}\n";
        assert_eq!(fmt(messy), want);
        assert_eq!(fmt(want), want);
        let messy =
            "kernel k{inout f:i32[N]\nlaunch grid(N) block(64) cluster(2) resident body {}}";
        let want = "kernel k {\n    inout f: i32[N]\n    launch grid(N) block(64) cluster(2) resident\n    body {}\n}\n";
        assert_eq!(fmt(messy), want);
    }

    #[test]
    fn keeps_comments_in_place() {
        let s = "// file\n\nconst A = 1 // one\n/// doc\nkernel k { // header\n    // before x\n    in x: f32[N /* n */]\n\n    /* a */ /* b */\n    out y: f32[N]\n    // end\n} // after\n// tail\n";
        let want = "// file\n\nconst A = 1 // one\n\n/// doc\nkernel k { // header\n    // before x\n    /* n */\n    in  x: f32[N]\n\n    /* a */ /* b */\n    out y: f32[N]\n    // end\n} // after\n\n// tail\n";
        assert_eq!(fmt(s), want);
        assert_eq!(fmt(want), want);
    }

    #[test]
    fn an_empty_file_stays_empty() {
        assert_eq!(fmt(""), "");
        assert_eq!(fmt("  \n// only\n"), "// only\n");
    }
}
