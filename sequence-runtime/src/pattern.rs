//! `prefix` patterns such as `"YYMMDD"` or `"INV-YYYYMM-"`: date tokens and literal text.
//!
//! The rules are the ones `#[derive(SequentialId)]` checks at compile time (its `ast` module);
//! patterns given through [`SequenceOptions`](crate::SequenceOptions) are checked here, when the
//! sequence is built, with the same messages.

use std::fmt::Write;

use jiff::civil::DateTime;

/// One piece of a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    Literal(String),
    Year4,
    Year2,
    Month,
    Day,
    Hour,
}

/// How long a period lasts: the finest date token of the pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Resolution {
    Year,
    Month,
    Day,
    Hour,
}

impl Piece {
    fn resolution(&self) -> Option<Resolution> {
        match self {
            Piece::Literal(_) => None,
            Piece::Year4 | Piece::Year2 => Some(Resolution::Year),
            Piece::Month => Some(Resolution::Month),
            Piece::Day => Some(Resolution::Day),
            Piece::Hour => Some(Resolution::Hour),
        }
    }

    fn token(&self) -> &'static str {
        match self {
            Piece::Literal(_) => "",
            Piece::Year4 => "YYYY",
            Piece::Year2 => "YY",
            Piece::Month => "MM",
            Piece::Day => "DD",
            Piece::Hour => "HH",
        }
    }
}

/// A parsed `prefix` pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pattern {
    pieces: Vec<Piece>,
    resolution: Option<Resolution>,
}

impl Pattern {
    /// Parses a pattern: runs of `Y`, `M`, `D`, `H` must be one of the tokens `YYYY`, `YY`, `MM`,
    /// `DD`, `HH`; text between single quotes, and every other character, is literal. A pattern
    /// with a date token must name every coarser unit too (`DD` needs `MM` and a year), or its
    /// IDs would repeat.
    pub(crate) fn parse(pattern: &str) -> Result<Pattern, String> {
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
                        "unknown prefix token `{token}`, expected one of: `YYYY`, `YY`, `MM`, `DD`, `HH` (quote literal text: `'{token}'`)"
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
            if finest.resolution() > Some(Resolution::Month) && !has(Resolution::Month) {
                missing.push(("a month (`MM`)", "month"));
            }
            if finest.resolution() > Some(Resolution::Day) && !has(Resolution::Day) {
                missing.push(("a day (`DD`)", "day"));
            }
            if let Some((_, every)) = missing.first() {
                let what = missing
                    .iter()
                    .map(|m| m.0)
                    .collect::<Vec<_>>()
                    .join(" and ");
                return Err(format!(
                    "prefix token `{}` needs {what} in the prefix too, or the same IDs would come back every {every}",
                    finest.token()
                ));
            }
        }
        Ok(Pattern { pieces, resolution })
    }

    /// The finest date token, if the pattern has any.
    pub(crate) fn resolution(&self) -> Option<Resolution> {
        self.resolution
    }

    /// The prefix for the civil date-time `at`.
    pub(crate) fn render(&self, at: DateTime) -> String {
        let mut out = String::new();
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

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn parses_like_the_derive() {
        let p = Pattern::parse("YYMMDD").unwrap();
        assert_eq!(p.pieces, vec![Piece::Year2, Piece::Month, Piece::Day]);
        assert_eq!(p.resolution(), Some(Resolution::Day));
        let p = Pattern::parse("INV-YYYYMM-").unwrap();
        assert_eq!(
            p.pieces,
            vec![
                Piece::Literal("INV-".into()),
                Piece::Year4,
                Piece::Month,
                Piece::Literal("-".into())
            ]
        );
        assert_eq!(p.resolution(), Some(Resolution::Month));
        let p = Pattern::parse("'DAY'YYYY").unwrap();
        assert_eq!(p.pieces, vec![Piece::Literal("DAY".into()), Piece::Year4]);
        let p = Pattern::parse("INV-").unwrap();
        assert_eq!(p.resolution(), None);
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
}
