//! `prefix` patterns such as `"YYMMDD"` or `"INV-YYYYMM-"`: date tokens and literal text.

use std::fmt::Write;

use jiff::civil::DateTime;

/// One piece of a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text written as it is.
    Literal(String),
    /// `YYYY`: the year, four digits.
    Year4,
    /// `YY`: the year, last two digits.
    Year2,
    /// `MM`: the month, two digits.
    Month,
    /// `DD`: the day of the month, two digits.
    Day,
    /// `HH`: the hour (0 to 23), two digits.
    Hour,
}

/// How long a period lasts: the unit of the finest date token of a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resolution {
    /// A year.
    Year,
    /// A month.
    Month,
    /// A day.
    Day,
    /// An hour.
    Hour,
}

impl Piece {
    /// The unit of a date token; `None` for literal text.
    pub fn resolution(&self) -> Option<Resolution> {
        match self {
            Piece::Literal(_) => None,
            Piece::Year4 | Piece::Year2 => Some(Resolution::Year),
            Piece::Month => Some(Resolution::Month),
            Piece::Day => Some(Resolution::Day),
            Piece::Hour => Some(Resolution::Hour),
        }
    }

    /// The token as written (empty for literal text).
    pub fn token(&self) -> &'static str {
        match self {
            Piece::Literal(_) => "",
            Piece::Year4 => "YYYY",
            Piece::Year2 => "YY",
            Piece::Month => "MM",
            Piece::Day => "DD",
            Piece::Hour => "HH",
        }
    }

    /// How many characters the piece renders to.
    pub fn rendered_len(&self) -> usize {
        match self {
            Piece::Literal(s) => s.chars().count(),
            Piece::Year4 => 4,
            Piece::Year2 | Piece::Month | Piece::Day | Piece::Hour => 2,
        }
    }
}

/// A parsed `prefix` pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pieces: Vec<Piece>,
    resolution: Option<Resolution>,
}

impl Pattern {
    /// Parses a pattern: runs of `Y`, `M`, `D`, `H` must be one of the tokens `YYYY`, `YY`, `MM`,
    /// `DD`, `HH`; text between single quotes, and every other character, is literal. A pattern
    /// with a date token must name every coarser unit too (`DD` needs `MM` and a year), or its
    /// IDs would repeat.
    ///
    /// ```
    /// use sequence_rules::pattern::{Pattern, Piece, Resolution};
    /// let p = Pattern::parse("INV-YYMM-").unwrap();
    /// assert_eq!(p.resolution(), Some(Resolution::Month));
    /// assert_eq!(p.pieces()[0], Piece::Literal("INV-".into()));
    /// assert!(Pattern::parse("YYY").unwrap_err().contains("unknown prefix token `YYY`"));
    /// ```
    pub fn parse(pattern: &str) -> Result<Pattern, String> {
        if pattern.is_empty() {
            return Err(
                "`prefix` is empty: give a pattern such as \"YYMMDD\" or remove the key".into(),
            );
        }
        let mut pieces: Vec<Piece> = Vec::new();
        let mut literal = String::new();
        let chars: Vec<char> = pattern.chars().collect();
        let mut i = 0;
        let mut quoted = false;
        while i < chars.len() {
            let c = chars[i];
            if c == '\'' {
                quoted = !quoted;
                i += 1;
                continue;
            }
            if quoted || !matches!(c, 'Y' | 'M' | 'D' | 'H') {
                literal.push(c);
                i += 1;
                continue;
            }
            let run = chars[i..].iter().take_while(|&&d| d == c).count();
            let token: String = chars[i..i + run].iter().collect();
            let piece = match token.as_str() {
                "YYYY" => Piece::Year4,
                "YY" => Piece::Year2,
                "MM" => Piece::Month,
                "DD" => Piece::Day,
                "HH" => Piece::Hour,
                _ => {
                    return Err(format!(
                        "unknown prefix token `{token}`, expected one of: `YYYY`, `YY`, `MM`, \
                         `DD`, `HH` (quote literal text: `'{token}'`)"
                    ))
                }
            };
            if !literal.is_empty() {
                pieces.push(Piece::Literal(std::mem::take(&mut literal)));
            }
            pieces.push(piece);
            i += run;
        }
        if quoted {
            return Err("unclosed `'` in `prefix`".into());
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        Pattern::from_pieces(pieces)
    }

    /// The pattern of `pieces` (as a `format` template's part before `{n}` gives them), if
    /// its date tokens name every coarser unit too. Adjacent literal pieces are joined.
    pub fn from_pieces(given: Vec<Piece>) -> Result<Pattern, String> {
        let mut pieces: Vec<Piece> = Vec::with_capacity(given.len());
        for piece in given {
            match (pieces.last_mut(), piece) {
                (_, Piece::Literal(s)) if s.is_empty() => {}
                (Some(Piece::Literal(last)), Piece::Literal(s)) => last.push_str(&s),
                (_, piece) => pieces.push(piece),
            }
        }
        let finest = pieces
            .iter()
            .filter(|p| p.resolution().is_some())
            .max_by_key(|p| p.resolution());
        let resolution = finest.and_then(Piece::resolution);
        if let Some(finest) = finest {
            let has = |r: Resolution| pieces.iter().any(|p| p.resolution() == Some(r));
            let mut missing = Vec::new();
            if !has(Resolution::Year) {
                missing.push(("a year (`YY` or `YYYY`)", "year"));
            }
            if resolution > Some(Resolution::Month) && !has(Resolution::Month) {
                missing.push(("a month (`MM`)", "month"));
            }
            if resolution > Some(Resolution::Day) && !has(Resolution::Day) {
                missing.push(("a day (`DD`)", "day"));
            }
            if let Some((_, every)) = missing.first() {
                let what = missing
                    .iter()
                    .map(|m| m.0)
                    .collect::<Vec<_>>()
                    .join(" and ");
                return Err(format!(
                    "prefix token `{}` needs {what} in the prefix too, or the same IDs would come \
                     back every {every}",
                    finest.token()
                ));
            }
        }
        Ok(Pattern { pieces, resolution })
    }

    /// The pieces, in order.
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// The unit of the finest date token, if the pattern has any: the length of a period.
    pub fn resolution(&self) -> Option<Resolution> {
        self.resolution
    }

    /// Whether the prefixes this pattern renders sort as their periods do: the date tokens
    /// written from the year down to the finest, one each (literal text only between them,
    /// the same in every prefix). `YYMMDD` and `INV-YYYY-MM` sort; `DDMMYY` does not.
    ///
    /// ```
    /// use sequence_rules::pattern::Pattern;
    /// assert!(Pattern::parse("YYMMDD").unwrap().is_chronological());
    /// assert!(!Pattern::parse("DD.MM.YY").unwrap().is_chronological());
    /// ```
    pub fn is_chronological(&self) -> bool {
        let units: Vec<Resolution> = self.pieces.iter().filter_map(Piece::resolution).collect();
        !units.is_empty() && units.windows(2).all(|w| w[0] < w[1])
    }

    /// Whether the pattern has literal text (which an integer ID cannot hold).
    pub fn has_literal(&self) -> bool {
        self.pieces.iter().any(|p| matches!(p, Piece::Literal(_)))
    }

    /// How many characters every rendered prefix has.
    pub fn rendered_len(&self) -> usize {
        self.pieces.iter().map(Piece::rendered_len).sum()
    }

    /// A regular expression that matches exactly the prefixes this pattern renders: literal
    /// text escaped, `\d{4}` for `YYYY` and `\d{2}` for the other tokens. Every
    /// non-alphanumeric ASCII character is escaped with a backslash, which PCRE (MongoDB's
    /// `$regex`) and Rust's `regex` both read as the character itself.
    ///
    /// ```
    /// use sequence_rules::pattern::Pattern;
    /// assert_eq!(Pattern::parse("INV-YYMM.").unwrap().regex(), r"INV\-\d{2}\d{2}\.");
    /// ```
    pub fn regex(&self) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(s) => out.push_str(&escape_regex(s)),
                Piece::Year4 => out.push_str(r"\d{4}"),
                _ => out.push_str(r"\d{2}"),
            }
        }
        out
    }

    /// The civil date-time at the start of the period whose prefix is `text`, if this pattern
    /// renders `text` for some date: the inverse of [`render`](Self::render) at the pattern's
    /// resolution. A two-digit year (`YY`) is read in the century that puts it closest to
    /// `around_year` (so `25` is 2025 around 2026, and `99` is 1999). A pattern without date
    /// tokens gives `DateTime::default()` for its one literal prefix.
    ///
    /// ```
    /// use sequence_rules::pattern::Pattern;
    /// let p = Pattern::parse("INV-YYMMDD-").unwrap();
    /// let at = p.parse_rendered("INV-251122-", 2026).unwrap();
    /// assert_eq!((at.year(), at.month(), at.day()), (2025, 11, 22));
    /// assert!(p.parse_rendered("INV-251322-", 2026).is_none()); // month 13
    /// assert!(p.parse_rendered("XYZ-251122-", 2026).is_none());
    /// ```
    pub fn parse_rendered(&self, text: &str, around_year: i16) -> Option<DateTime> {
        let (mut year, mut month, mut day, mut hour) = (None, 1_i16, 1_i16, 0_i16);
        let mut rest = text;
        for piece in &self.pieces {
            if let Piece::Literal(s) = piece {
                rest = rest.strip_prefix(s.as_str())?;
                continue;
            }
            let len = piece.rendered_len();
            let head = rest
                .get(..len)
                .filter(|h| h.bytes().all(|b| b.is_ascii_digit()))?;
            let value: i16 = head.parse().ok()?;
            rest = &rest[len..];
            match piece {
                Piece::Year4 => year = Some(value),
                Piece::Year2 => {
                    let mut y = around_year - around_year.rem_euclid(100) + value;
                    if y > around_year + 50 {
                        y -= 100;
                    } else if y < around_year - 50 {
                        y += 100;
                    }
                    year = Some(y);
                }
                Piece::Month => month = value,
                Piece::Day => day = value,
                Piece::Hour => hour = value,
                Piece::Literal(_) => {}
            }
        }
        if !rest.is_empty() {
            return None;
        }
        let Some(year) = year else {
            return Some(DateTime::default());
        };
        let small = |v: i16| i8::try_from(v).ok();
        let at = DateTime::new(year, small(month)?, small(day)?, small(hour)?, 0, 0, 0).ok()?;
        (self.render(at) == text).then_some(at)
    }

    /// The prefix for the civil date-time `at`.
    ///
    /// ```
    /// use sequence_rules::pattern::Pattern;
    /// let at = jiff::civil::date(2025, 11, 22).at(14, 5, 0, 0);
    /// assert_eq!(Pattern::parse("INV-YYMMDD-").unwrap().render(at), "INV-251122-");
    /// ```
    pub fn render(&self, at: DateTime) -> String {
        let mut out = String::with_capacity(self.rendered_len());
        for piece in &self.pieces {
            // Writing to a String cannot fail.
            let _ = match piece {
                Piece::Literal(s) => out.write_str(s),
                Piece::Year4 => write!(out, "{:04}", at.year()),
                Piece::Year2 => write!(out, "{:02}", at.year().rem_euclid(100)),
                Piece::Month => write!(out, "{:02}", at.month()),
                Piece::Day => write!(out, "{:02}", at.day()),
                Piece::Hour => write!(out, "{:02}", at.hour()),
            };
        }
        out
    }
}

/// `text` with every non-alphanumeric ASCII character escaped by a backslash: a regular
/// expression (PCRE, as MongoDB's `$regex` reads it, or Rust's `regex`) that matches `text`.
pub fn escape_regex(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if c.is_ascii() && !c.is_ascii_alphanumeric() {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn pieces_and_resolutions() {
        let p = Pattern::parse("YYMMDD").unwrap();
        assert_eq!(p.pieces(), [Piece::Year2, Piece::Month, Piece::Day]);
        assert_eq!(p.resolution(), Some(Resolution::Day));
        assert!(!p.has_literal());
        assert_eq!(p.rendered_len(), 6);
        let p = Pattern::parse("INV-YYYYMM-").unwrap();
        assert_eq!(
            p.pieces(),
            [
                Piece::Literal("INV-".into()),
                Piece::Year4,
                Piece::Month,
                Piece::Literal("-".into())
            ]
        );
        assert_eq!(p.resolution(), Some(Resolution::Month));
        assert_eq!(p.rendered_len(), 11);
        let p = Pattern::parse("'DAY'YYYY").unwrap();
        assert_eq!(p.pieces(), [Piece::Literal("DAY".into()), Piece::Year4]);
        assert_eq!(Pattern::parse("INV-").unwrap().resolution(), None);
        assert!(Pattern::parse("YYY").unwrap_err().contains("`YYY`"));
        assert!(Pattern::parse("").unwrap_err().contains("empty"));
        assert!(Pattern::parse("'open").unwrap_err().contains("unclosed"));
    }

    #[test]
    fn periods_must_not_repeat() {
        let e = Pattern::parse("MMDD").unwrap_err();
        assert!(e.contains("`DD` needs a year"), "{e}");
        assert!(e.contains("every year"), "{e}");
        let e = Pattern::parse("YYDDHH").unwrap_err();
        assert!(e.contains("`HH` needs a month (`MM`)"), "{e}");
        assert!(Pattern::parse("YYYYMMDDHH").is_ok());
        assert!(Pattern::parse("DD.MM.YY").is_ok());
    }

    #[test]
    fn renders_periods() {
        let at = date(2025, 11, 22).at(14, 5, 0, 0);
        assert_eq!(Pattern::parse("YYMMDD").unwrap().render(at), "251122");
        assert_eq!(
            Pattern::parse("INV-YYYYMMDDHH-").unwrap().render(at),
            "INV-2025112214-"
        );
        let at = date(2005, 1, 2).at(3, 0, 0, 0);
        assert_eq!(Pattern::parse("YYMMDD").unwrap().render(at), "050102");
    }

    #[test]
    fn rendered_prefixes_parse_back() {
        let p = Pattern::parse("DD.MM.YY-HH").unwrap();
        let at = date(2031, 2, 28).at(23, 0, 0, 0);
        let text = p.render(at);
        assert_eq!(text, "28.02.31-23");
        assert_eq!(p.parse_rendered(&text, 2026), Some(at));
        assert_eq!(
            p.parse_rendered("29.02.31-23", 2026),
            None,
            "no 29 February 2031"
        );
        assert_eq!(p.parse_rendered("28.02.31-24", 2026), None);
        assert_eq!(p.parse_rendered("28.02.31-2", 2026), None);
        assert_eq!(p.parse_rendered("28.02.31-230", 2026), None);
        let yy = Pattern::parse("YY").unwrap();
        assert_eq!(yy.parse_rendered("99", 2026).map(|d| d.year()), Some(1999));
        assert_eq!(yy.parse_rendered("76", 2026).map(|d| d.year()), Some(2076));
        assert_eq!(yy.parse_rendered("77", 2026).map(|d| d.year()), Some(1977));
        let constant = Pattern::parse("INV-").unwrap();
        assert_eq!(
            constant.parse_rendered("INV-", 2026),
            Some(DateTime::default())
        );
        assert_eq!(constant.parse_rendered("INV", 2026), None);
    }

    #[test]
    fn regexes_escape_literal_text() {
        assert_eq!(Pattern::parse("'A.B'YYYY").unwrap().regex(), r"A\.B\d{4}");
        assert_eq!(Pattern::parse("Ü-YY").unwrap().regex(), r"Ü\-\d{2}");
    }
}
