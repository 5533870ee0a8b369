//! The README's speed figures are bench/RESULTS.md's, so that the two cannot drift apart.
//!
//! The rule: in the README's sections named in [`SPEED_SECTIONS`], every number written
//! outside code (a time, a rate, a ratio, a shape's extent) must appear in a table of
//! bench/RESULTS.md as the same string (`1.0` is not `1.00`), and every commit named there
//! must appear somewhere in RESULTS.md. A figure the README computes for itself fails: its
//! place is a table of RESULTS.md, with the run and the reference it is computed from.

use std::collections::BTreeSet;
use std::path::Path;

/// The README's sections whose numbers are measurements.
const SPEED_SECTIONS: &[&str] = &["Modes at run time", "Speed"];

/// One number or commit in a README line, and where it was.
#[derive(Debug, PartialEq, Eq)]
struct Figure {
    line: usize,
    text: String,
}

/// `text` with its inline code spans (between backticks) blanked out.
fn without_code_spans(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(i, part)| if i % 2 == 0 { part } else { "" })
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The numbers of a piece of prose: `150.5`, `0.84` in `0.84 x` and `1.2x`, `28672` in
/// `K=28672`, `20,000`. Digits inside a word (`f16`, `H200`, `sm_90`, `985dd78`) are not
/// numbers.
fn numbers(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let digits_end = |mut j: usize| {
        while chars.get(j).is_some_and(char::is_ascii_digit) {
            j += 1;
        }
        j
    };
    let word_at = |j: usize| chars.get(j).is_some_and(|&c| is_word_char(c));
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let after_word = i > 0 && (is_word_char(chars[i - 1]) || chars[i - 1] == '.');
        if !chars[i].is_ascii_digit() || after_word {
            i += 1;
            continue;
        }
        let mut end = digits_end(i);
        // Thousands separators: a comma and exactly three digits.
        while chars.get(end) == Some(&',') && digits_end(end + 1) == end + 4 {
            end += 4;
        }
        if chars.get(end) == Some(&'.') && chars.get(end + 1).is_some_and(char::is_ascii_digit) {
            end = digits_end(end + 1);
        }
        // `1.2x` is a ratio; any other letter makes the digits part of a word (`0x1f`).
        let ratio = chars.get(end) == Some(&'x') && !word_at(end + 1);
        if ratio || !word_at(end) {
            out.push(chars[i..end].iter().collect());
        }
        i = end;
    }
    out
}

/// The commits a piece of prose names: words of 7 to 40 lower-case hex digits with a
/// letter and a digit among them.
fn commits(text: &str) -> Vec<String> {
    text.split(|c: char| !is_word_char(c))
        .filter(|w| {
            (7..=40).contains(&w.len())
                && w.chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
                && w.chars().any(|c| c.is_ascii_digit())
                && w.chars().any(|c| c.is_ascii_alphabetic())
        })
        .map(str::to_string)
        .collect()
}

/// The numbers and commits of the README's speed sections, outside fenced code blocks and
/// code spans, each with its 1-based line.
fn speed_figures(readme: &str) -> (Vec<Figure>, Vec<Figure>) {
    let (mut nums, mut hashes) = (Vec::new(), Vec::new());
    let (mut in_section, mut in_code_block) = (false, false);
    for (i, line) in readme.lines().enumerate() {
        if line.starts_with("```") {
            in_code_block = !in_code_block;
            continue;
        }
        if in_code_block {
            continue;
        }
        if let Some(title) = line.strip_prefix("## ") {
            in_section = SPEED_SECTIONS.contains(&title.trim());
            continue;
        }
        if !in_section {
            continue;
        }
        let prose = without_code_spans(line);
        let at = |text| Figure { line: i + 1, text };
        nums.extend(numbers(&prose).into_iter().map(at));
        hashes.extend(commits(&prose).into_iter().map(at));
    }
    (nums, hashes)
}

/// The numbers of every table row of RESULTS.md.
fn table_numbers(results: &str) -> BTreeSet<String> {
    results
        .lines()
        .filter(|l| l.trim_start().starts_with('|'))
        .flat_map(|l| numbers(&without_code_spans(l)))
        .collect()
}

#[test]
fn readme_speed_figures_are_in_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let results = std::fs::read_to_string(root.join("bench/RESULTS.md")).expect("RESULTS.md");
    let measured = table_numbers(&results);
    let (nums, hashes) = speed_figures(&readme);
    assert!(
        nums.len() > 20,
        "the README's speed sections lost their figures: {nums:?}"
    );
    let readme_lines: Vec<&str> = readme.lines().collect();
    let mut missing: Vec<String> = nums
        .iter()
        .filter(|f| !measured.contains(&f.text))
        .map(|f| {
            format!(
                "README.md:{}: {} is in no table of bench/RESULTS.md: {}",
                f.line,
                f.text,
                readme_lines[f.line - 1].trim()
            )
        })
        .collect();
    missing.extend(
        hashes
            .iter()
            .filter(|f| !commits(&results).contains(&f.text))
            .map(|f| {
                format!(
                    "README.md:{}: commit {} is not in bench/RESULTS.md: {}",
                    f.line,
                    f.text,
                    readme_lines[f.line - 1].trim()
                )
            }),
    );
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn numbers_are_found_as_written_and_words_are_not_numbers() {
    assert_eq!(
        numbers("150.5 µs, 0.84 x the rate, 1.2x, 87%, K=28672 N=8192, [16384, 8192] bf16"),
        [
            "150.5", "0.84", "1.2", "87", "28672", "8192", "16384", "8192"
        ]
    );
    assert_eq!(numbers("20,000 launches, (3.96 each)."), ["20,000", "3.96"]);
    assert_eq!(
        numbers("1.00 is not 1.0; the end 12."),
        ["1.00", "1.0", "12"]
    );
    assert!(
        numbers("f16 H200 sm_90 W4A16 985dd78 0x1f v1.2 int4").is_empty(),
        "{:?}",
        numbers("f16 H200 sm_90 W4A16 985dd78 0x1f v1.2 int4")
    );
    assert_eq!(
        commits("at 985dd78 (not deadbeef, not 1234567)"),
        ["985dd78"]
    );
}

#[test]
fn only_the_speed_sections_outside_code_count() {
    let readme = "\
## Intro
3.14 µs
## Speed
A `IMA_CHECKED=1` launch at 985dd78 runs 0.84 x.
```
9.99
```
| kernel | 150.5 µs |
## Layout
2.71
";
    let (nums, hashes) = speed_figures(readme);
    let at = |line, text: &str| Figure {
        line,
        text: text.into(),
    };
    assert_eq!(nums, [at(4, "0.84"), at(8, "150.5")]);
    assert_eq!(hashes, [at(4, "985dd78")]);
    assert_eq!(
        table_numbers("prose 1.5\n| a | 2.5 † | `3.5` |\n"),
        BTreeSet::from(["2.5".to_string()])
    );
}
