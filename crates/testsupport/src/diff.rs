//! The diff a transcript test prints when two sides differ: unified, with a few lines of context around each
//! change, so that a failure in a long transcript still fits a CI log that keeps only its head and tail.

use similar::TextDiff;

/// Lines of unchanged context around each change.
const CONTEXT_LINES: usize = 3;

/// `-` lines only in `expected`, `+` lines only in `actual`, `@@` hunks with [`CONTEXT_LINES`] of context;
/// empty when the texts are equal.
pub fn line_diff(expected: &str, actual: &str) -> String {
    TextDiff::from_lines(expected, actual)
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .missing_newline_hint(false)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_changes_and_their_context_are_shown() {
        let expected: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let actual = expected.replace("line 10\n", "line ten\n");
        let diff = line_diff(&expected, &actual);
        assert!(diff.contains("-line 10\n+line ten\n"), "{diff}");
        assert!(diff.contains(" line 7\n") && diff.contains(" line 13\n"), "{diff}");
        assert!(!diff.contains("line 6\n") && !diff.contains("line 14\n"), "{diff}");
        assert_eq!(line_diff(&expected, &expected), "");
    }
}
