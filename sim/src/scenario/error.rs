//! `ScenarioError`: a scenario file that cannot be run, with where (`file:line:col`) and what was expected.
//! Every error is found before the run starts; a run never begins from a file that has one.

use std::fmt;
use std::ops::Range;

/// A problem in a scenario file, located in its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: String,
    /// 1-based; 0 when the problem has no place in the text (a file that cannot be read).
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl ScenarioError {
    /// An error at byte offset `span.start` of `text`.
    pub fn at(file: &str, text: &str, span: Range<usize>, message: impl Into<String>) -> ScenarioError {
        let (line, col) = line_col(text, span.start);
        ScenarioError { file: file.to_string(), line, col, message: message.into() }
    }

    /// An error about the file as a whole.
    pub fn whole(file: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: file.to_string(), line: 0, col: 0, message: message.into() }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}:{}: {}", self.file, self.line, self.col, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = text[line_start..offset].chars().count() + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based_and_count_characters() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 6), (2, 1));
        // 'é' is two bytes; the column after it is 3, not 4.
        assert_eq!(line_col(text, 9), (2, 3));
        assert_eq!(line_col(text, 1000), (3, 1));
    }
}
