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

impl Template {
    /// Whether `template` holds a date field (`{YYYY}`, `{YY}`, `{MM}`, `{DD}`, `{HH}`), read as
    /// [`parse`](Self::parse) reads it (`{{` and `}}` are text): then its counters are per
    /// period. A `const fn`, so that a model's configuration says at compile time whether its
    /// counter is one. For a template `parse` refuses, it may say either.
    pub const fn has_date_field(template: &str) -> bool {
        let b = template.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let doubled = i + 1 < b.len() && b[i + 1] == b[i];
            if (b[i] == b'{' || b[i] == b'}') && doubled {
                i += 2;
            } else if b[i] == b'{' {
                // The field runs to the next `}`; its name to a `:` before it.
                let mut end = i + 1;
                while end < b.len() && b[end] != b'}' {
                    end += 1;
                }
                let mut name_end = i + 1;
                while name_end < end && b[name_end] != b':' {
                    name_end += 1;
                }
                if is_date_name(b, i + 1, name_end) {
                    return true;
                }
                i = end + 1;
            } else {
                i += 1;
            }
        }
        false
    }
}

/// Whether `b[start..end]` is the name of a date field.
const fn is_date_name(b: &[u8], start: usize, end: usize) -> bool {
    const NAMES: [&[u8]; 5] = [b"YYYY", b"YY", b"MM", b"DD", b"HH"];
    let mut n = 0;
    while n < NAMES.len() {
        let name = NAMES[n];
        if name.len() == end - start {
            let mut k = 0;
            while k < name.len() && name[k] == b[start + k] {
                k += 1;
            }
            if k == name.len() {
                return true;
            }
        }
        n += 1;
    }
    false
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

    /// Every template of up to four tokens (about 100,000): for each one `parse` accepts,
    /// `has_date_field` says what the parsed template says.
    #[test]
    fn date_fields_are_found_as_parse_finds_them() {
        const TOKENS: [&str; 17] = [
            "{", "}", "{{", "}}", "{n}", "{n:08}", "{check}", "{YYYY}", "{YY}", "{MM}", "{DD}",
            "{HH}", "{YY:2}", "YY", "-", ":", "{x}",
        ];
        let mut checked = 0;
        let mut template = String::new();
        let mut stack = vec![0usize; 0];
        loop {
            template.clear();
            for &t in &stack {
                template.push_str(TOKENS[t]);
            }
            let found = Template::has_date_field(&template);
            if let Ok(parsed) = Template::parse(&template) {
                let dated = parsed.prefix.is_some_and(|p| p.resolution().is_some());
                assert_eq!(found, dated, "{template:?}");
                checked += 1;
            }
            // The next sequence of tokens, shortest first.
            let mut i = stack.len();
            loop {
                if i == 0 {
                    if stack.len() == 4 {
                        assert!(checked > 1_000, "{checked} templates parsed");
                        return;
                    }
                    stack = vec![0; stack.len() + 1];
                    break;
                }
                i -= 1;
                stack[i] += 1;
                if stack[i] < TOKENS.len() {
                    break;
                }
                stack[i] = 0;
            }
        }
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
