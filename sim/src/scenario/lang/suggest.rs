//! "Did you mean": the known word nearest to a misspelt one, by edit distance, for errors about unknown
//! keys, names, steps and nodes. A suggestion is made only when it is close (at most a third of the word's
//! letters differ), so that a wholly unknown word is not answered with a random known one.

/// The known word closest to `word`, if one is close enough to be what the author meant.
pub fn nearest<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for k in known {
        let d = distance(&word.to_lowercase(), &k.to_lowercase());
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k)
}

/// `; did you mean `x`?` when a known word is close, else nothing: to append to an error message.
pub fn hint<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    match nearest(word, known) {
        Some(k) if k != word => format!("; did you mean `{k}`?"),
        _ => String::new(),
    }
}

/// Levenshtein distance, counting a swap of two neighbours as one edit (the commonest typo).
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// Appends a suggestion to a serde error that names an unknown field or variant (`unknown field `puts`,
/// expected one of `put`, ...`), which is how toml words every unknown key and enum value.
pub fn serde_message(message: &str) -> String {
    let word = |after: &str| message.strip_prefix(after).and_then(|rest| rest.split('`').nth(1));
    let Some(unknown) = word("unknown field ").or_else(|| word("unknown variant ")) else {
        return message.to_string();
    };
    let Some((_, expected)) = message.split_once("expected ") else { return message.to_string() };
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    format!("{message}{}", hint(unknown, known))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_word_is_suggested_and_a_far_one_is_not() {
        let known = ["put", "get", "delete", "lease_grant", "watch_progress"];
        assert_eq!(nearest("puts", known), Some("put"));
        assert_eq!(nearest("lease_grnat", known), Some("lease_grant"));
        assert_eq!(nearest("watch_progres", known), Some("watch_progress"));
        assert_eq!(nearest("frobnicate", known), None);
    }

    #[test]
    fn serde_errors_about_unknown_words_get_a_hint() {
        let m = "unknown field `puts`, expected one of `name`, `put`, `get`";
        assert_eq!(serde_message(m), format!("{m}; did you mean `put`?"));
        let m = "unknown variant `reed`, expected one of `read`, `write`";
        assert_eq!(serde_message(m), format!("{m}; did you mean `read`?"));
        assert_eq!(serde_message("invalid type: string, expected u64"), "invalid type: string, expected u64");
    }
}
