//! Label selectors as `labels.Parse` reads them (k8s.io/apimachinery `pkg/labels/selector.go`): a lexer of
//! identifiers and operators, a parser of comma-separated requirements, and each requirement's checks
//! (a qualified-name key, label values, one value for `=`, integers for `>` and `<`), with upstream's
//! error texts, since clients show them as they are.
//!
//! Sans IO and pure: a string in, [`Requirement`]s or the message of a 400 out.

use crate::registry::field_error::{aggregate, FieldError};
use crate::registry::names;

/// A requirement's operator (`selection.Operator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operator {
    In,
    NotIn,
    Equals,
    DoubleEquals,
    NotEquals,
    Exists,
    DoesNotExist,
    GreaterThan,
    LessThan,
}

/// One requirement of a selector: a key, an operator and its values (sorted, without duplicates).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Requirement {
    pub key: String,
    pub operator: Operator,
    pub values: Vec<String>,
}

impl Requirement {
    /// Whether a set of labels, read through `label`, satisfies the requirement (`Requirement.Matches`):
    /// `!=` and `notin` hold for objects without the label; `>` and `<` need an integer label.
    pub(crate) fn matches(&self, label: Option<&str>) -> bool {
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => label.is_some_and(has),
            Operator::NotIn | Operator::NotEquals => label.is_none_or(|l| !has(l)),
            Operator::Exists => label.is_some(),
            Operator::DoesNotExist => label.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(actual) = label.and_then(|l| l.parse::<i64>().ok()) else { return false };
                let Some(bound) = self.values.first().and_then(|v| v.parse::<i64>().ok()) else { return false };
                if self.operator == Operator::GreaterThan {
                    actual > bound
                } else {
                    actual < bound
                }
            }
        }
    }
}

/// Parses a label selector; the error is the message of upstream's 400.
pub(crate) fn parse(selector: &str) -> Result<Vec<Requirement>, String> {
    let mut parser = Parser { items: lex(selector), position: 0 };
    let mut requirements = parser.parse()?;
    // Upstream sorts by key (a stable sort).
    requirements.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(requirements)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(text: &str) -> Option<Token> {
    Some(match text {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Every token of `s`, ending with `EndOfString`. Works on bytes, as upstream's lexer does, so an
/// identifier is everything between specials and spaces, whatever its characters.
fn lex(s: &str) -> Vec<(Token, String)> {
    let bytes = s.as_bytes();
    let mut pos = 0;
    let mut items = Vec::new();
    loop {
        while pos < bytes.len() && is_space(bytes[pos]) {
            pos += 1;
        }
        if pos >= bytes.len() {
            items.push((Token::EndOfString, String::new()));
            return items;
        }
        let start = pos;
        if is_special(bytes[pos]) {
            // The longest run of specials that is an operator, extended while it stays one.
            let mut last: Option<(Token, usize)> = None;
            while pos < bytes.len() && is_special(bytes[pos]) {
                pos += 1;
                match keyword(&s[start..pos]) {
                    Some(token) => last = Some((token, pos)),
                    None if last.is_some() => {
                        pos -= 1;
                        break;
                    }
                    None => {}
                }
            }
            match last {
                Some((token, end)) => {
                    pos = end;
                    items.push((token, s[start..end].to_string()));
                }
                None => items.push((Token::Error, format!("error expected: keyword found '{}'", &s[start..pos]))),
            }
        } else {
            while pos < bytes.len() && !is_special(bytes[pos]) && !is_space(bytes[pos]) {
                pos += 1;
            }
            let text = &s[start..pos];
            items.push((keyword(text).unwrap_or(Token::Identifier), text.to_string()));
        }
    }
}

/// Where a token is read: in values, `in` and `notin` are plain identifiers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

impl Parser {
    fn lookahead(&self, context: Context) -> (Token, String) {
        let (token, text) = self.items[self.position.min(self.items.len() - 1)].clone();
        (Self::in_context(token, context), text)
    }

    fn consume(&mut self, context: Context) -> (Token, String) {
        let item = self.lookahead(context);
        self.position += 1;
        item
    }

    fn in_context(token: Token, context: Context) -> Token {
        match token {
            Token::In | Token::NotIn if context == Context::Values => Token::Identifier,
            other => other,
        }
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (token, text) = self.lookahead(Context::Values);
            match token {
                Token::Identifier | Token::DoesNotExist => {
                    let requirement =
                        self.requirement().map_err(|err| format!("unable to parse requirement: {err}"))?;
                    requirements.push(requirement);
                    let (token, text) = self.consume(Context::Values);
                    match token {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (next, text) = self.lookahead(Context::Values);
                            if next != Token::Identifier && next != Token::DoesNotExist {
                                return Err(format!("found '{text}', expected: identifier after ','"));
                            }
                        }
                        _ => return Err(format!("found '{text}', expected: ',' or 'end of string'")),
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => return Err(format!("found '{text}', expected: !, identifier, or 'end of string'")),
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (key, inferred) = self.key_and_inferred_operator()?;
        if let Some(operator) = inferred {
            return new_requirement(key, operator, vec![]);
        }
        let operator = self.operator()?;
        let values = match operator {
            Operator::In | Operator::NotIn => self.values()?,
            _ => self.exact_value()?,
        };
        new_requirement(key, operator, values)
    }

    /// The key, and `Exists` or `DoesNotExist` when nothing follows it.
    fn key_and_inferred_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut operator = None;
        let (mut token, mut text) = self.consume(Context::Values);
        if token == Token::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            (token, text) = self.consume(Context::Values);
        }
        if token != Token::Identifier {
            return Err(format!("found '{text}', expected: identifier"));
        }
        // The parser's path is nil, which a field error prints as `<nil>`.
        validate_key(&text, "<nil>")?;
        let (next, _) = self.lookahead(Context::Values);
        if matches!(next, Token::EndOfString | Token::Comma) && operator.is_none() {
            operator = Some(Operator::Exists);
        }
        Ok((text, operator))
    }

    fn operator(&mut self) -> Result<Operator, String> {
        let (token, text) = self.consume(Context::KeyAndOperator);
        Ok(match token {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => return Err(format!("found '{text}', expected: {BINARY_OPERATORS}")),
        })
    }

    /// `(a,b)`: a set, where empty members (`(,a)`, `()`) are the empty value.
    fn values(&mut self) -> Result<Vec<String>, String> {
        let (token, text) = self.consume(Context::Values);
        if token != Token::OpenPar {
            // Upstream's text lacks the comma the others have.
            return Err(format!("found '{text}' expected: '('"));
        }
        let (token, text) = self.lookahead(Context::Values);
        match token {
            Token::Identifier | Token::Comma => {
                let set = self.identifiers()?;
                if self.consume(Context::Values).0 != Token::ClosedPar {
                    return Err(format!("found '{text}', expected: ')'"));
                }
                Ok(set)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{text}', expected: ',', ')' or identifier")),
        }
    }

    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut set: Vec<String> = Vec::new();
        let insert = |set: &mut Vec<String>, v: String| {
            if !set.contains(&v) {
                set.push(v);
            }
        };
        loop {
            let (token, text) = self.consume(Context::Values);
            match token {
                Token::Identifier => {
                    insert(&mut set, text);
                    let (next, next_text) = self.lookahead(Context::Values);
                    match next {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(set),
                        _ => return Err(format!("found '{next_text}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if set.is_empty() {
                        insert(&mut set, String::new());
                    }
                    let (next, _) = self.lookahead(Context::Values);
                    if next == Token::ClosedPar {
                        insert(&mut set, String::new());
                        return Ok(set);
                    }
                    if next == Token::Comma {
                        self.consume(Context::Values);
                        insert(&mut set, String::new());
                    }
                }
                _ => return Err(format!("found '{text}', expected: ',', or identifier")),
            }
        }
    }

    /// The value after `=`, `==`, `!=`, `>`, `<`: empty when the requirement ends there.
    fn exact_value(&mut self) -> Result<Vec<String>, String> {
        let (token, _) = self.lookahead(Context::Values);
        if matches!(token, Token::EndOfString | Token::Comma) {
            return Ok(vec![String::new()]);
        }
        let (token, text) = self.consume(Context::Values);
        if token == Token::Identifier {
            return Ok(vec![text]);
        }
        Err(format!("found '{text}', expected: identifier"))
    }
}

fn validate_key(key: &str, path: &str) -> Result<(), String> {
    let errs = names::qualified_name(key);
    if errs.is_empty() {
        return Ok(());
    }
    Err(FieldError::invalid(path, key, &errs.join("; ")).to_string())
}

/// `NewRequirement`: the checks of a parsed requirement, every failure at once.
fn new_requirement(key: String, operator: Operator, mut values: Vec<String>) -> Result<Requirement, String> {
    values.sort();
    values.dedup();
    let mut errs = Vec::new();
    let errs_key = names::qualified_name(&key);
    if !errs_key.is_empty() {
        errs.push(FieldError::invalid("key", &key, &errs_key.join("; ")));
    }
    let shown =
        || format!("[]string{{{}}}", values.iter().map(|v| crate::go_text::quote(v)).collect::<Vec<_>>().join(", "));
    match operator {
        Operator::In | Operator::NotIn if values.is_empty() => {
            errs.push(invalid_list("values", shown(), "for 'in', 'notin' operators, values set can't be empty"));
        }
        Operator::Equals | Operator::DoubleEquals | Operator::NotEquals if values.len() != 1 => {
            errs.push(invalid_list("values", shown(), "exact-match compatibility requires one single value"));
        }
        Operator::GreaterThan | Operator::LessThan => {
            if values.len() != 1 {
                errs.push(invalid_list("values", shown(), "for 'Gt', 'Lt' operators, exactly one value is required"));
            }
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(FieldError::invalid(
                        &format!("values[{i}]"),
                        v,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    ));
                }
            }
        }
        _ => {}
    }
    for (i, v) in values.iter().enumerate() {
        let value_errs = names::label_value(v);
        if !value_errs.is_empty() {
            errs.push(FieldError::invalid(&format!("values[{i}][{key}]"), v, &value_errs.join("; ")));
        }
    }
    if errs.is_empty() {
        Ok(Requirement { key, operator, values })
    } else {
        Err(aggregate(&errs))
    }
}

fn invalid_list(field: &str, shown: String, detail: &str) -> FieldError {
    let mut err = FieldError::invalid(field, "", detail);
    err.value = crate::registry::field_error::BadValue::GoSyntax(shown);
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse_as_upstream_parses_them() {
        let req = |key: &str, operator, values: &[&str]| Requirement {
            key: key.into(),
            operator,
            values: values.iter().map(|v| v.to_string()).collect(),
        };
        let cases: &[(&str, Vec<Requirement>)] = &[
            ("", vec![]),
            ("a=b", vec![req("a", Operator::Equals, &["b"])]),
            ("a==b", vec![req("a", Operator::DoubleEquals, &["b"])]),
            ("a!=b", vec![req("a", Operator::NotEquals, &["b"])]),
            ("a=", vec![req("a", Operator::Equals, &[""])]),
            (" b , !a ", vec![req("a", Operator::DoesNotExist, &[]), req("b", Operator::Exists, &[])]),
            ("x in (b, a,a)", vec![req("x", Operator::In, &["a", "b"])]),
            ("x notin ()", vec![req("x", Operator::NotIn, &[""])]),
            ("x in (,a)", vec![req("x", Operator::In, &["", "a"])]),
            ("n>3,n<10", vec![req("n", Operator::GreaterThan, &["3"]), req("n", Operator::LessThan, &["10"])]),
            ("example.com/app=in", vec![req("example.com/app", Operator::Equals, &["in"])]),
        ];
        for (text, want) in cases {
            assert_eq!(&parse(text).unwrap(), want, "{text:?}");
        }
    }

    #[test]
    fn bad_selectors_fail_with_upstreams_text() {
        let cases = [
            ("a=(b", "unable to parse requirement: found '(', expected: identifier"),
            ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
            ("a,", "found '', expected: identifier after ','"),
            ("=a", "found '=', expected: !, identifier, or 'end of string'"),
            ("a in b", "unable to parse requirement: found 'b' expected: '('"),
            ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
            ("a in b)", "unable to parse requirement: found 'b' expected: '('"),
            ("a notin", "unable to parse requirement: found '' expected: '('"),
            ("a >", "unable to parse requirement: values[0]: Invalid value: \"\": for 'Gt', 'Lt' operators, the value must be an integer"),
            ("a>x", "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"),
            ("a=b c", "found 'c', expected: ',' or 'end of string'"),
            ("a=b!", "found '!', expected: ',' or 'end of string'"),
            (
                "-a=b",
                "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
            (
                "a=-b",
                "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ),
            ("a=b=c", "found '=', expected: ',' or 'end of string'"),
            ("a <> b", "unable to parse requirement: found '>', expected: identifier"),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text).unwrap_err(), want, "{text:?}");
        }
    }

    #[test]
    fn requirements_match_as_upstreams_do() {
        let one = |text: &str| parse(text).unwrap().remove(0);
        assert!(one("a=b").matches(Some("b")));
        assert!(!one("a=b").matches(None));
        assert!(one("a!=b").matches(None));
        assert!(one("a notin (b)").matches(Some("c")));
        assert!(!one("a notin (b)").matches(Some("b")));
        assert!(one("a>3").matches(Some("4")));
        assert!(!one("a>3").matches(Some("x")));
        assert!(!one("a<3").matches(None));
        assert!(one("!a").matches(None));
        assert!(one("a").matches(Some("")));
    }
}
