//! `format` templates such as `"ACC-{n:08}-{check}"` or `"{YYYY}/{n:05}/EU"`: where the number,
//! its check digits and the period go in an ID.

use crate::pattern::{Pattern, Piece};

/// What follows the number in an ID: text, the check digits (if the configuration has them)
/// and more text. Without a `format`, both texts are empty and the check digits follow the
/// number directly.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tail {
    /// The text between the number and the check digits.
    pub before_check: String,
    /// The text after the check digits.
    pub after_check: String,
}

impl Tail {
    /// Whether the tail has any text.
    pub fn has_text(&self) -> bool {
        !self.before_check.is_empty() || !self.after_check.is_empty()
    }
}

/// A parsed `format` template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// The part before `{n}`: date fields and text, as a `prefix` pattern (`None` if empty).
    pub prefix: Option<Pattern>,
    /// The width of `{n:08}` (`None` for `{n}`).
    pub width: Option<u8>,
    /// What follows `{n}`.
    pub tail: Tail,
    /// Whether the template places `{check}` itself.
    pub check: bool,
}

/// The fields a template may hold, for messages.
/// The error of a template without `{n}`.
const NO_NUMBER: &str =
    "`format` has no `{n}`: write where the number goes, such as \"ACC-{n:08}-{check}\"";

const FIELDS: &str = "`{n}`, `{n:08}`, `{check}`, `{YYYY}`, `{YY}`, `{MM}`, `{DD}`, `{HH}`";

impl Template {
    /// Parses a template: `{n}` (or `{n:08}`, zero-padded to 8 digits) once, where the number
    /// goes; `{check}` at most once, after it, where the check digits go; the date fields
    /// `{YYYY}`, `{YY}`, `{MM}`, `{DD}`, `{HH}` before the number; every other character is
    /// text, `{{` and `}}` stand for `{` and `}`.
    ///
    /// ```
    /// use sequence_rules::template::Template;
    /// let t = Template::parse("ACC-{n:08}-{check}").unwrap();
    /// assert_eq!(t.width, Some(8));
    /// assert_eq!((t.tail.before_check.as_str(), t.check), ("-", true));
    /// assert!(Template::parse("ACC-").unwrap_err().contains("has no `{n}`"));
    /// ```
    pub fn parse(template: &str) -> Result<Template, String> {
        let mut pieces: Vec<Piece> = Vec::new();
        let mut text = String::new();
        let mut number: Option<Option<u8>> = None;
        let mut check = false;
        let mut tail = Tail::default();
        // Whether the template writes the number anywhere, for the error of a `{check}` before
        // it.
        let has_number = template.contains("{n}") || template.contains("{n:");
        let mut chars = template.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    text.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    text.push('}');
                }
                '}' => {
                    return Err(
                        "`format` has a `}` that closes nothing: write `}}` for the character"
                            .into(),
                    )
                }
                '{' => {
                    let mut field = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(c) => field.push(c),
                            None => {
                                return Err(format!(
                                    "`format` has an unclosed `{{{field}`: close it with `}}`, \
                                     or write `{{{{` for the character"
                                ))
                            }
                        }
                    }
                    let (name, spec) = match field.split_once(':') {
                        Some((name, spec)) => (name, Some(spec)),
                        None => (field.as_str(), None),
                    };
                    let date = match name {
                        "YYYY" => Some(Piece::Year4),
                        "YY" => Some(Piece::Year2),
                        "MM" => Some(Piece::Month),
                        "DD" => Some(Piece::Day),
                        "HH" => Some(Piece::Hour),
                        _ => None,
                    };
                    let no_width = || {
                        format!(
                            "`format` field `{{{field}}}` takes no `:`; only `{{n}}` has a width, \
                             as in `{{n:06}}`"
                        )
                    };
                    match (name, date) {
                        ("n", _) => {
                            if number.is_some() {
                                return Err(
                                    "`format` has `{n}` twice: an ID holds its number once".into(),
                                );
                            }
                            number = Some(spec.map(width).transpose()?);
                            if !text.is_empty() {
                                pieces.push(Piece::Literal(std::mem::take(&mut text)));
                            }
                        }
                        ("check", _) => {
                            if spec.is_some() {
                                return Err(no_width());
                            }
                            if number.is_none() && !has_number {
                                return Err(NO_NUMBER.into());
                            }
                            if number.is_none() {
                                return Err("`{check}` must come after `{n}` in `format`".into());
                            }
                            if check {
                                return Err("`format` has `{check}` twice".into());
                            }
                            check = true;
                            tail.before_check = std::mem::take(&mut text);
                        }
                        (_, Some(piece)) => {
                            if spec.is_some() {
                                return Err(no_width());
                            }
                            if number.is_some() {
                                return Err(format!(
                                    "the date field `{{{name}}}` must come before `{{n}}` in \
                                     `format`, where the period of the counter is written"
                                ));
                            }
                            if !text.is_empty() {
                                pieces.push(Piece::Literal(std::mem::take(&mut text)));
                            }
                            pieces.push(piece);
                        }
                        (_, None) => {
                            return Err(format!(
                                "unknown `format` field `{{{name}}}`, expected one of: {FIELDS} \
                                 (write `{{{{` for the character `{{`)"
                            ))
                        }
                    }
                }
                c => text.push(c),
            }
        }
        let Some(width) = number else {
            if !text.is_empty() {
                pieces.push(Piece::Literal(text));
            }
            return Err(NO_NUMBER.into());
        };
        if check {
            tail.after_check = text;
        } else {
            tail.before_check = text;
        }
        let prefix = if pieces.is_empty() {
            None
        } else {
            Some(Pattern::from_pieces(pieces)?)
        };
        Ok(Template {
            prefix,
            width,
            tail,
            check,
        })
    }
}

/// The width of `{n:08}` (or `{n:8}`): a count of digits, checked by the rules of `width`.
fn width(spec: &str) -> Result<u8, String> {
    let digits = spec.strip_prefix('0').unwrap_or(spec);
    match digits.parse::<u8>() {
        Ok(w) if digits.bytes().all(|b| b.is_ascii_digit()) => Ok(w),
        _ => Err(format!(
            "the width in `{{n:{spec}}}` must be a number of digits, such as `{{n:08}}`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::Resolution;

    #[test]
    fn templates_place_number_check_and_period() {
        let t = Template::parse("ACC-{n:08}-{check}").unwrap();
        assert_eq!(t.prefix.unwrap().pieces(), [Piece::Literal("ACC-".into())]);
        assert_eq!(t.width, Some(8));
        assert!(t.check);
        assert_eq!(
            t.tail,
            Tail {
                before_check: "-".into(),
                after_check: String::new()
            }
        );
        let t = Template::parse("{YYYY}/{n:5}/EU").unwrap();
        let prefix = t.prefix.unwrap();
        assert_eq!(prefix.pieces(), [Piece::Year4, Piece::Literal("/".into())]);
        assert_eq!(prefix.resolution(), Some(Resolution::Year));
        assert_eq!((t.width, t.check), (Some(5), false));
        assert_eq!(t.tail.before_check, "/EU");
        let t = Template::parse("{n}").unwrap();
        assert_eq!((t.prefix, t.width, t.tail.has_text()), (None, None, false));
        let t = Template::parse("{{YY}}{n}{check}}}").unwrap();
        assert_eq!(t.prefix.unwrap().pieces(), [Piece::Literal("{YY}".into())]);
        assert_eq!(t.tail.after_check, "}");
        // Letters are text in a template: no quoting needed.
        let t = Template::parse("MY-DAY-{n}").unwrap();
        assert_eq!(t.prefix.unwrap().resolution(), None);
    }

    #[test]
    fn mistakes_are_named() {
        for (template, expected) in [
            ("ACC-", "has no `{n}`"),
            ("{n}{n}", "`{n}` twice"),
            ("{check}{n}", "must come after `{n}`"),
            ("{n}{check}{check}", "`{check}` twice"),
            ("{n}-{YYYY}", "`{YYYY}` must come before `{n}`"),
            (
                "{m}",
                "unknown `format` field `{m}`, expected one of: `{n}`",
            ),
            ("{n", "unclosed `{n`"),
            ("n}", "closes nothing"),
            ("{n:x}", "must be a number of digits"),
            ("{YY:2}{n}", "takes no `:`"),
            ("{DD}{n}", "needs a year"),
            ("ACC-{check}", "has no `{n}`"),
            (
                "ACC-{num:08}",
                "unknown `format` field `{num}`, expected one of",
            ),
        ] {
            let e = Template::parse(template).unwrap_err();
            assert!(e.contains(expected), "{template}: {e}");
        }
    }
}
