//! Plain text tables: columns padded to their widest cell, two spaces apart.

/// Renders `rows` under `header` (no header line if it is empty), each line indented by
/// `indent`, with trailing blanks trimmed.
pub fn table(indent: &str, header: &[&str], rows: &[Vec<String>]) -> String {
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let lines: Vec<&Vec<String>> = (!header.is_empty())
        .then_some(&header)
        .into_iter()
        .chain(rows)
        .collect();
    let mut widths: Vec<usize> = Vec::new();
    for line in &lines {
        for (i, cell) in line.iter().enumerate() {
            let n = cell.chars().count();
            match widths.get_mut(i) {
                Some(w) => *w = (*w).max(n),
                None => widths.push(n),
            }
        }
    }
    lines
        .iter()
        .map(|line| {
            let cells: Vec<String> = line
                .iter()
                .zip(&widths)
                // Padded by hand: `format!`'s width stops at 65535 (a long name's cell).
                .map(|(c, &w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
                .collect();
            format!("{indent}{}\n", cells.join("  ").trim_end())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::table;

    fn row(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn a_cell_wider_than_format_s_width_limit_is_padded() {
        let long = "x".repeat(70_000);
        let text = table("", &[], &[row(&[&long, "a"]), row(&["b", "c"])]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1].len(), 70_000 + 2 + 1);
        assert!(lines[1].starts_with("b ") && lines[1].ends_with("  c"));
    }

    #[test]
    fn pads_columns_to_the_widest_cell() {
        let rows = [row(&["q", "f16"]), row(&["scale", ""])];
        assert_eq!(
            table("  ", &["name", "dtype"], &rows),
            "  name   dtype\n  q      f16\n  scale\n"
        );
    }

    #[test]
    fn an_empty_header_prints_no_header_line() {
        let rows = [row(&["domain", "x"]), row(&["guard", "y"])];
        assert_eq!(table("", &[], &rows), "domain  x\nguard   y\n");
    }
}
