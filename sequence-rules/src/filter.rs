//! `filter(...)`: counter documents found by a filter of fields, for the conventions of other
//! programs that keep one counter document per model, period or group (seed 001's daily
//! `{ prefix: 251125, count }`, mongoose-auto-increment-reworked's `{ m, f, c }`, a team's own
//! script).
//!
//! Each field of the filter holds a constant or a part of the counter's key:
//!
//! | written | the field holds |
//! | --- | --- |
//! | `"Ticket"`, `7`, `true` | that constant |
//! | `name` | the counter's name |
//! | `id_field` | the name the documents store the ID under (`_id`, or the ID field's) |
//! | `period` | the period, as the `prefix` pattern renders it (`"251125"`) |
//! | `period as number` | the same, read as an integer (`251125`) |
//! | `scope(tenant)` | the value of the scope field `tenant` |
//!
//! The derive takes it as `#[seq(filter(prefix = period as number))]`; the runtime and the
//! command line as the text `prefix = period as number`, fields separated by commas (a field
//! name that is not an identifier is written in double quotes).
//!
//! ```
//! use sequence_rules::filter::{self, FilterValue};
//! let fields = filter::parse(r#"m = "Ticket", f = id_field"#).unwrap();
//! assert_eq!(fields[0].field, "m");
//! assert_eq!(fields[1].value, FilterValue::IdField);
//! assert_eq!(filter::display(&fields), r#"m = "Ticket", f = id_field"#);
//! ```

use std::fmt;

/// What one field of a counter's filter holds. `S` is how text is held: `&'static str` in a
/// derived model's constant configuration, `String` in runtime options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FilterValue<S = String> {
    /// A constant text.
    Text(S),
    /// A constant integer.
    Integer(i64),
    /// A constant boolean.
    Bool(bool),
    /// The counter's name.
    Name,
    /// The name the documents store the ID under.
    IdField,
    /// The period, as the `prefix` pattern renders it.
    Period,
    /// The period, as the `prefix` pattern renders it, read as an integer.
    PeriodNumber,
    /// The value of a scope field, by its name in `scope`.
    Scope(S),
}

/// One field of a counter's filter: the field's name in the counter document, and what it
/// holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FilterField<S = String> {
    /// The field's name in the counter document.
    pub field: S,
    /// What it holds.
    pub value: FilterValue<S>,
}

impl<S: AsRef<str>> FilterValue<S> {
    /// The same value, its text borrowed.
    pub fn as_str(&self) -> FilterValue<&str> {
        match self {
            FilterValue::Text(t) => FilterValue::Text(t.as_ref()),
            FilterValue::Integer(n) => FilterValue::Integer(*n),
            FilterValue::Bool(b) => FilterValue::Bool(*b),
            FilterValue::Name => FilterValue::Name,
            FilterValue::IdField => FilterValue::IdField,
            FilterValue::Period => FilterValue::Period,
            FilterValue::PeriodNumber => FilterValue::PeriodNumber,
            FilterValue::Scope(s) => FilterValue::Scope(s.as_ref()),
        }
    }

    /// The same value, its text owned.
    pub fn to_owned(&self) -> FilterValue<String> {
        match self.as_str() {
            FilterValue::Text(t) => FilterValue::Text(t.to_owned()),
            FilterValue::Integer(n) => FilterValue::Integer(n),
            FilterValue::Bool(b) => FilterValue::Bool(b),
            FilterValue::Name => FilterValue::Name,
            FilterValue::IdField => FilterValue::IdField,
            FilterValue::Period => FilterValue::Period,
            FilterValue::PeriodNumber => FilterValue::PeriodNumber,
            FilterValue::Scope(s) => FilterValue::Scope(s.to_owned()),
        }
    }
}

impl<S: AsRef<str>> FilterField<S> {
    /// The same field, its text borrowed.
    pub fn as_str(&self) -> FilterField<&str> {
        FilterField {
            field: self.field.as_ref(),
            value: self.value.as_str(),
        }
    }

    /// The same field, its text owned.
    pub fn to_owned(&self) -> FilterField<String> {
        FilterField {
            field: self.field.as_ref().to_owned(),
            value: self.value.to_owned(),
        }
    }
}

impl<S: AsRef<str>> fmt::Display for FilterField<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = self.field.as_ref();
        if is_identifier(field) {
            f.write_str(field)?;
        } else {
            write!(f, "{}", quoted(field))?;
        }
        f.write_str(" = ")?;
        match &self.value {
            FilterValue::Text(t) => write!(f, "{}", quoted(t.as_ref())),
            FilterValue::Integer(n) => write!(f, "{n}"),
            FilterValue::Bool(b) => write!(f, "{b}"),
            FilterValue::Name => f.write_str("name"),
            FilterValue::IdField => f.write_str("id_field"),
            FilterValue::Period => f.write_str("period"),
            FilterValue::PeriodNumber => f.write_str("period as number"),
            FilterValue::Scope(s) => write!(f, "scope({})", s.as_ref()),
        }
    }
}

/// A filter as written: its fields separated by commas.
pub fn display<S: AsRef<str>>(fields: &[FilterField<S>]) -> String {
    fields
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why the text of a filter does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// The byte at which the parse stopped.
    pub at: usize,
    /// What was expected there.
    pub expected: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`filter` does not parse at byte {}: expected {}; write fields as `field = value`, \
             separated by commas, such as `prefix = period as number, app = \"billing\"`",
            self.at, self.expected
        )
    }
}

impl std::error::Error for SyntaxError {}

/// The fields of the filter written `text`: `field = value, …`, a value being a text in double
/// quotes, an integer, `true`, `false`, `name`, `id_field`, `period`, `period as number` or
/// `scope(field)`. The rules of a filter (which fields it needs) are checked with the rest of
/// the configuration.
pub fn parse(text: &str) -> Result<Vec<FilterField>, SyntaxError> {
    let mut p = Parser { text, at: 0 };
    let mut fields = Vec::new();
    loop {
        p.skip_space();
        let field = p.field_name()?;
        p.skip_space();
        p.expect("=")?;
        p.skip_space();
        let value = p.value()?;
        fields.push(FilterField { field, value });
        p.skip_space();
        if p.at == text.len() {
            return Ok(fields);
        }
        p.expect(",")?;
    }
}

/// Whether `name` is written without quotes: a letter or `_`, then letters, digits and `_`.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `text` in double quotes, with `"` and `\` escaped.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The state of one [`parse`].
struct Parser<'t> {
    text: &'t str,
    at: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn error<T>(&self, expected: &str) -> Result<T, SyntaxError> {
        Err(SyntaxError {
            at: self.at,
            expected: expected.to_owned(),
        })
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    fn expect(&mut self, token: &str) -> Result<(), SyntaxError> {
        if self.rest().starts_with(token) {
            self.at += token.len();
            Ok(())
        } else {
            self.error(&format!("`{token}`"))
        }
    }

    /// An identifier, or `None` where there is none.
    fn identifier(&mut self) -> Option<String> {
        let rest = self.rest();
        let len = rest
            .char_indices()
            .find(|&(i, c)| !(c.is_ascii_alphabetic() || c == '_' || (i > 0 && c.is_ascii_digit())))
            .map_or(rest.len(), |(i, _)| i);
        let word = rest[..len].to_owned();
        self.at += len;
        (len > 0).then_some(word)
    }

    /// A text in double quotes.
    fn quoted(&mut self) -> Result<String, SyntaxError> {
        self.expect("\"")?;
        let mut out = String::new();
        let mut chars = self.rest().char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.at += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, e @ ('"' | '\\'))) => out.push(e),
                    _ => {
                        self.at += i;
                        return self.error("`\\\"` or `\\\\` after a backslash");
                    }
                },
                c => out.push(c),
            }
        }
        self.at = self.text.len();
        self.error("the closing `\"` of a text")
    }

    fn field_name(&mut self) -> Result<String, SyntaxError> {
        if self.rest().starts_with('"') {
            return self.quoted();
        }
        match self.identifier() {
            Some(name) => Ok(name),
            None => self.error("a field name"),
        }
    }

    fn value(&mut self) -> Result<FilterValue, SyntaxError> {
        let rest = self.rest();
        if rest.starts_with('"') {
            return self.quoted().map(FilterValue::Text);
        }
        if rest.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
            let len = rest
                .char_indices()
                .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
                .map_or(rest.len(), |(i, _)| i);
            return match rest[..len].parse() {
                Ok(n) => {
                    self.at += len;
                    Ok(FilterValue::Integer(n))
                }
                Err(_) => self.error("an integer that fits in `i64`"),
            };
        }
        let start = self.at;
        let word = self.identifier();
        match word.as_deref() {
            Some("true") => Ok(FilterValue::Bool(true)),
            Some("false") => Ok(FilterValue::Bool(false)),
            Some("name") => Ok(FilterValue::Name),
            Some("id_field") => Ok(FilterValue::IdField),
            Some("period") => {
                let before = self.at;
                self.skip_space();
                if self.identifier().as_deref() == Some("as") {
                    self.skip_space();
                    match self.identifier().as_deref() {
                        Some("number") => Ok(FilterValue::PeriodNumber),
                        _ => self.error("`number` after `period as`"),
                    }
                } else {
                    self.at = before;
                    Ok(FilterValue::Period)
                }
            }
            Some("scope") => {
                self.skip_space();
                self.expect("(")?;
                self.skip_space();
                let Some(field) = self.identifier() else {
                    return self.error("the name of a scope field");
                };
                self.skip_space();
                self.expect(")")?;
                Ok(FilterValue::Scope(field))
            }
            _ => {
                self.at = start;
                self.error(
                    "a value: a text in double quotes, an integer, `true`, `false`, `name`, \
                     `id_field`, `period`, `period as number` or `scope(field)`",
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(field: &str, value: FilterValue) -> FilterField {
        FilterField {
            field: field.to_owned(),
            value,
        }
    }

    #[test]
    fn every_value_parses_and_writes_back_the_same() {
        let text = r#"prefix = period as number, m = "Ticket", "odd-name" = "say \"hi\"", n = -7, on = true, who = name, f = id_field, p = period, g = scope(tenant)"#;
        let fields = parse(text).unwrap();
        assert_eq!(
            fields,
            [
                field("prefix", FilterValue::PeriodNumber),
                field("m", FilterValue::Text("Ticket".into())),
                field("odd-name", FilterValue::Text("say \"hi\"".into())),
                field("n", FilterValue::Integer(-7)),
                field("on", FilterValue::Bool(true)),
                field("who", FilterValue::Name),
                field("f", FilterValue::IdField),
                field("p", FilterValue::Period),
                field("g", FilterValue::Scope("tenant".into())),
            ]
        );
        assert_eq!(display(&fields), text);
        assert_eq!(parse(&display(&fields)).unwrap(), fields);
    }

    #[test]
    fn spaces_are_free_around_the_tokens() {
        assert_eq!(
            parse("  a=period  as   number ,b = scope( t ) ").unwrap(),
            [
                field("a", FilterValue::PeriodNumber),
                field("b", FilterValue::Scope("t".into()))
            ]
        );
    }

    #[test]
    fn a_mistake_says_where_and_what_was_expected() {
        let e = parse("prefix period").unwrap_err();
        assert_eq!(e.at, 7);
        assert!(e.to_string().contains("expected `=`"), "{e}");
        let e = parse("a = period as text").unwrap_err();
        assert!(e.expected.contains("`number`"), "{e}");
        let e = parse("a = tenant").unwrap_err();
        assert!(e.expected.contains("`scope(field)`"), "{e}");
        assert_eq!(e.at, 4);
        assert!(parse("a = \"open")
            .unwrap_err()
            .expected
            .contains("closing"));
        assert!(parse("").is_err());
        assert!(parse("a = 1,").is_err());
        assert!(parse("a = 99999999999999999999")
            .unwrap_err()
            .expected
            .contains("i64"));
    }
}
