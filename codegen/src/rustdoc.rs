//! A spec's doc comments as rustdoc reads them, in the stubs' `///` comments and in the
//! generated crate's README (its crate documentation).

/// `docs` with each untagged code fence tagged `text`: rustdoc runs an untagged fence as a
/// Rust doctest, and a spec's examples are CUDA, Python or prose (`cargo test` of the
/// generated crate failed on them). A fence with a tag keeps it; closing fences stay bare.
pub(crate) fn doc_lines(docs: &[String]) -> Vec<String> {
    let mut open = false;
    docs.iter()
        .map(|line| {
            let trimmed = line.trim_start();
            let Some(tag) = trimmed.strip_prefix("```") else {
                return line.clone();
            };
            open = !open;
            if open && tag.trim().is_empty() {
                let indent = &line[..line.len() - trimmed.len()];
                format!("{indent}```text")
            } else {
                line.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::doc_lines;

    #[test]
    fn untagged_opening_fences_read_as_text() {
        let docs: Vec<String> = [
            "Copies x; usage:",
            "```",
            "y = copy(x)",
            "```",
            "  ```rust",
            "let y = 1;",
            "  ```",
            "   ```",
            "tail",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            doc_lines(&docs),
            [
                "Copies x; usage:",
                "```text",
                "y = copy(x)",
                "```",
                "  ```rust",
                "let y = 1;",
                "  ```",
                "   ```text",
                "tail"
            ]
        );
    }
}
