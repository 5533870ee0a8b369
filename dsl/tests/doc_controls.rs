//! A doc comment with a control character in it, or one that changes the text's direction,
//! is a syntax error at that character: the generated Rust refuses a bare carriage return
//! and rustc's lints the direction changes in a doc comment, and Python a NUL in its source.
//! A CRLF line end and a tab are text.

const KERNEL: &str = "kernel k {\n    in  x: f32[N]\n    out y: f32[N]\n    launch over y[i]\n    body { y(i) = x(i); }\n}\n";

fn parse(doc: &str) -> Result<ima_dsl::ast::File, Vec<ima_dsl::Diagnostic>> {
    ima_dsl::syntax::parse(&format!("{doc}\n{KERNEL}"))
}

#[test]
fn a_control_or_direction_character_in_a_doc_comment_is_refused_where_it_stands() {
    for (doc, code, at) in [
        ("/// a\rb", "U+000D", 5),
        ("/// nul \0 here", "U+0000", 8),
        ("///\x07bell", "U+0007", 3),
        ("/// x\u{202e}y", "U+202E", 5),
        ("/// \u{2066}", "U+2066", 4),
    ] {
        let errors = parse(doc).expect_err(doc);
        assert_eq!(errors.len(), 1, "{doc:?}: {errors:?}");
        assert!(
            errors[0].message.contains(code),
            "{doc:?}: {}",
            errors[0].message
        );
        assert_eq!(errors[0].span.start, at, "{doc:?}");
        let len = doc[at..].chars().next().unwrap().len_utf8();
        assert_eq!(errors[0].span.end, at + len, "{doc:?}");
    }
}

#[test]
fn a_crlf_line_end_and_a_tab_are_text() {
    let file = parse("/// one\ttab\r").expect("a CRLF line end and a tab");
    let ima_dsl::ast::Item::Kernel(k) = &file.items[0] else {
        panic!("a kernel")
    };
    assert_eq!(k.docs, ["one\ttab"]);
}
