//! Any text through parse, check, fmt and explain: nothing may panic, and whatever parses
//! formats to a fixed point. Run from the repository root:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run parse_check /tmp/corpus fuzz/corpus/parse_check -- -dict=fuzz/parse_check.dict`

#![no_main]

use ima_dsl::{Source, fmt};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(module) = ima_dsl::compile(&Source::new("fuzz.ima", text)) {
        let _ = ima_codegen::explain::explain(&module, None);
    }
    if let Ok(once) = fmt::format(text) {
        let twice = fmt::format(&once).expect("formatted text parses");
        assert_eq!(twice, once, "fmt is not idempotent");
        assert_eq!(
            once.matches('@').count(),
            text.matches('@').count(),
            "fmt lost a comment"
        );
    }
});
