//! The comparison every value-contracted read makes, `ima_value_in(v, lo, hi)`, compiled
//! for the host from ima.cuh (the header every generated module embeds) and run over the
//! edges of every pairing of an element type with an index type: it must say
//! `lo <= v < hi` exactly as exact arithmetic (i128 here) does, for any `lo <= hi` the
//! index type holds, negative bounds over unsigned elements included. No GPU needed: a
//! host C++ compiler (`c++`, or `$CXX`).

use std::fmt::Write as _;
use std::process::Command;

/// An element or index type: its C name and range.
#[derive(Clone, Copy)]
struct Ty {
    c: &'static str,
    min: i128,
    max: i128,
}

const fn ty(c: &'static str, min: i128, max: i128) -> Ty {
    Ty { c, min, max }
}

const I8: Ty = ty("signed char", i8::MIN as i128, i8::MAX as i128);
const U8: Ty = ty("unsigned char", 0, u8::MAX as i128);
const I16: Ty = ty("short", i16::MIN as i128, i16::MAX as i128);
const U16: Ty = ty("unsigned short", 0, u16::MAX as i128);
const I32: Ty = ty("int", i32::MIN as i128, i32::MAX as i128);
const U32: Ty = ty("unsigned int", 0, u32::MAX as i128);
const I64: Ty = ty("long long", i64::MIN as i128, i64::MAX as i128);
const U64: Ty = ty("unsigned long long", 0, u64::MAX as i128);

/// `ima_value_in` as ima.cuh defines it (every generated module embeds the header).
fn value_in_source() -> String {
    let cuh = ima_codegen::cuda::IMA_CUH;
    let head = "template <typename T, typename I>\n__device__ __forceinline__ bool ima_value_in(";
    let start = cuh.find(head).expect("ima.cuh defines ima_value_in");
    let end = start + cuh[start..].find("\n}\n").unwrap() + 3;
    cuh[start..end].to_string()
}

/// A C literal of `v` in type `t` (the least i64 has none of its own).
fn literal(v: i128, t: Ty) -> String {
    if v == i64::MIN as i128 {
        "(-9223372036854775807LL - 1)".into()
    } else if t.c.starts_with("unsigned") {
        format!("({})({v}ULL)", t.c)
    } else {
        format!("({})({v}LL)", t.c)
    }
}

/// Edges of a range and a few values between.
fn edges(t: Ty) -> Vec<i128> {
    let mut v = vec![t.min, t.min + 1, -2, -1, 0, 1, 2, 7, 1000, t.max - 1, t.max];
    v.extend([
        i32::MAX as i128,
        i32::MAX as i128 + 1,
        u32::MAX as i128,
        1 << 40,
    ]);
    v.retain(|&x| x >= t.min && x <= t.max);
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn value_in_agrees_with_exact_arithmetic_for_every_element_and_index_type() {
    let pairs = [
        (I8, I32),
        (U8, I32),
        (I16, I32),
        (U16, I32),
        (I32, I32),
        (U32, I32),
        (I64, I32),
        (U64, I32),
        (I32, I64),
        (U32, I64),
        (I64, I64),
        (U64, I64),
    ];
    let mut src =
        String::from("#include <cstdio>\n#define __device__\n#define __forceinline__ inline\n");
    src.push_str(&value_in_source());
    src.push_str("\nint main() {\n");
    let mut want = String::new();
    for (t, i) in pairs {
        for v in edges(t) {
            for lo in edges(i) {
                for hi in edges(i).into_iter().filter(|&hi| hi >= lo) {
                    writeln!(
                        src,
                        "    std::putchar(ima_value_in<{}, {}>({}, {}, {}) ? '1' : '0');",
                        t.c,
                        i.c,
                        literal(v, t),
                        literal(lo, i),
                        literal(hi, i)
                    )
                    .unwrap();
                    want.push(if lo <= v && v < hi { '1' } else { '0' });
                }
            }
        }
    }
    src.push_str("    return 0;\n}\n");

    let dir = tempfile::tempdir().unwrap();
    let (cpp, exe) = (dir.path().join("value_in.cpp"), dir.path().join("value_in"));
    std::fs::write(&cpp, &src).unwrap();
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let built = Command::new(&cxx)
        .args(["-std=c++17", "-O1", "-o"])
        .arg(&exe)
        .arg(&cpp)
        .output()
        .unwrap_or_else(|e| panic!("running {cxx}: {e}"));
    assert!(
        built.status.success(),
        "{cxx} failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let got = String::from_utf8(Command::new(&exe).output().unwrap().stdout).unwrap();
    assert_eq!(got.len(), want.len());
    // Name the first disagreement by its case, recomputed in the same order.
    if let Some(at) = got.bytes().zip(want.bytes()).position(|(g, w)| g != w) {
        let line = src
            .lines()
            .filter(|l| l.contains("ima_value_in<"))
            .nth(at)
            .unwrap();
        panic!(
            "case {at}: {} gives {}, exact arithmetic {}",
            line.trim(),
            &got[at..=at],
            &want[at..=at]
        );
    }
}
