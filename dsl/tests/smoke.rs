use ima_dsl::{Source, compile};

#[test]
fn attn_spec_compiles() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../specs/attn.ima")).unwrap();
    let src = Source::new("specs/attn.ima", text);
    let m = match compile(&src) {
        Ok(m) => m,
        Err(d) => panic!("{}", src.render(&d)),
    };
    println!("{m:#?}");
}
