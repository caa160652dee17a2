//! The rules of an ID's shape: the `prefix` or `format` template, its time zone, check digits
//! and encoding.

use super::{Checker, FormatKeys};
use crate::defaults;
use crate::encoding::{sqids, Encoding};
use crate::key::Key;
use crate::limits::MAX_DIGITS;
use crate::pattern::Pattern;
use crate::template::{Tail, Template};
use crate::tz;

/// The widest Crockford base 32 code whose values all fit an `i64` (`32^12 = 2^60`).
const CROCKFORD_MAX_WIDTH: usize = 12;

impl Checker<'_, '_> {
    /// `encoding`, `alphabet` and `min_length`: how the number is written.
    pub(super) fn encoding(&mut self) {
        let spec = self.spec;
        if let Some(encoding) = spec.encoding.filter(|_| self.on(Key::Encoding)) {
            self.encoding = encoding;
            if encoding != Encoding::Decimal {
                self.needs.text = Some(Key::Encoding);
                if let Some(start) = spec.start.filter(|&s| s < 0 && self.on(Key::Start)) {
                    self.v.at(
                        Key::Start,
                        format!(
                            "`start` ({start}) must not be negative with `encoding = \"{encoding}\"`: \
                             its codes have no sign"
                        ),
                    );
                }
            }
        }
        let sqids = self.encoding == Encoding::Sqids;
        for key in [Key::Alphabet, Key::MinLength] {
            if self.on(key) && !sqids {
                self.v
                    .at(key, format!("`{key}` needs `encoding = \"sqids\"`"));
            }
        }
        if !sqids {
            return;
        }
        if let Some(alphabet) = spec.alphabet.filter(|_| self.on(Key::Alphabet)) {
            if let Err(why) = sqids::check_alphabet(alphabet) {
                self.v.at(Key::Alphabet, why);
            }
        }
        if let Some(n) = spec.min_length.filter(|_| self.on(Key::MinLength)) {
            if let Err(why) = sqids::check_min_length(u64::from(n)) {
                self.v.at(Key::MinLength, why);
            }
        }
    }

    /// The keys that shape an ID: the prefix pattern (or the `format` template), its time
    /// zone, and the digits.
    pub(super) fn format(&mut self) -> FormatKeys {
        let spec = self.spec;
        let mut width = self.digit_count(Key::Width, spec.width);
        let mut digits = self.digit_count(Key::Digits, spec.digits);
        let with_prefix = self.on(Key::Prefix);
        let mut pattern = spec.prefix.filter(|_| with_prefix).and_then(|p| {
            Pattern::parse(p)
                .map_err(|why| self.v.at(Key::Prefix, why))
                .ok()
        });
        let mut broken = with_prefix && pattern.is_none();
        let (mut template, mut tail, mut check_placed) = (false, Tail::default(), false);
        if let Some(text) = spec.format.filter(|_| self.on(Key::Format)) {
            if with_prefix {
                self.v.at(
                    Key::Format,
                    "`format` cannot be combined with `prefix`: write the period's fields in the \
                     template, as in \"INV-{YY}{MM}{DD}-{n:04}\"",
                );
            } else if self.on(Key::Width) {
                self.v.at(
                    Key::Width,
                    "`width` cannot be combined with `format`: write it in the template, as in \
                     `{n:06}`",
                );
            } else if self.on(Key::Digits) {
                self.v.at(
                    Key::Digits,
                    "`digits` cannot be combined with `format`: the template's `{n:08}` sets \
                     the width",
                );
                digits = None;
            } else {
                match Template::parse(text) {
                    Ok(t) => {
                        template = true;
                        width = match t.width {
                            Some(w) if !(1..=MAX_DIGITS).contains(&w) => {
                                self.v.at(
                                    Key::Format,
                                    format!(
                                        "the width in `{{n:{w:02}}}` must be between 1 and 18, \
                                         got {w}"
                                    ),
                                );
                                None
                            }
                            w => w,
                        };
                        let has_text = t.tail.has_text()
                            || t.prefix.as_ref().is_some_and(Pattern::has_literal)
                            || (t.prefix.is_none() && width.is_some());
                        if has_text && self.needs.text.is_none() {
                            self.needs.text = Some(Key::Format);
                        }
                        pattern = t.prefix;
                        (tail, check_placed) = (t.tail, t.check);
                    }
                    Err(why) => {
                        self.v.at(Key::Format, why);
                        broken = true;
                    }
                }
            }
        }
        let periodic = pattern.as_ref().and_then(Pattern::resolution).is_some();
        if template && periodic && width.is_none() && self.encoding != Encoding::Sqids {
            width = Some(defaults::WIDTH);
        }
        let mut zone = None;
        if let Some(name) = spec.tz.filter(|_| self.on(Key::Tz)) {
            if broken {
                // The prefix is wrong already; one error is enough.
            } else if !periodic {
                self.v.at(
                    Key::Tz,
                    "`tz` needs a `prefix` or `format` with date tokens (`YYYY`, `YY`, `MM`, \
                     `DD`, `HH`)",
                );
            } else {
                zone = tz::time_zone(name);
                if zone.is_none() {
                    self.v.at(
                        Key::Tz,
                        format!(
                            "unknown time zone `{name}`: `tz` must be an IANA time zone name \
                             such as `Europe/Berlin` or `UTC`"
                        ),
                    );
                }
            }
        }
        FormatKeys {
            pattern,
            template,
            tail,
            check_placed,
            check: None,
            periodic,
            zone,
            width,
            digits,
            start: spec.start.filter(|_| self.on(Key::Start)),
            max: spec.max.filter(|_| self.on(Key::Max)),
        }
    }

    /// `check_digit`: an algorithm for the encoding, placed where the template says; and what
    /// the encoding makes of `digits` and `width`.
    pub(super) fn check_digit(&mut self, f: &mut FormatKeys) {
        let encoding = self.encoding;
        if let Some(check) = self.spec.check_digit.filter(|_| self.on(Key::CheckDigit)) {
            let refused = match (encoding, check.is_decimal()) {
                (Encoding::Sqids, _) => Some(
                    "`check_digit` cannot be combined with `encoding = \"sqids\"`: Sqids IDs \
                     have no check digit; codes people type take `encoding = \"crockford32\"` \
                     with `check_digit = \"crockford\"`"
                        .to_owned(),
                ),
                (Encoding::Decimal, false) => Some(format!(
                    "`check_digit = \"{check}\"` is the check symbol of Crockford base 32: it \
                     needs `encoding = \"crockford32\"`; decimal numbers take `luhn`, `damm` or \
                     `mod97`"
                )),
                (Encoding::Crockford32, true) => Some(format!(
                    "`check_digit = \"{check}\"` checks decimal digits; a Crockford base 32 code \
                     takes `check_digit = \"crockford\"`"
                )),
                _ => None,
            };
            match refused {
                Some(why) => self.v.at(Key::CheckDigit, why),
                None => {
                    f.check = Some(check);
                    if check.is_decimal() {
                        self.needs.check_digits = check.len() as u8;
                    }
                }
            }
        } else if f.check_placed {
            self.v.at(
                Key::Format,
                "`format` places `{check}` but no `check_digit` is set: add `check_digit = \
                 \"luhn\"` (or `damm`, `mod97`) or remove `{check}`",
            );
        }
        if encoding == Encoding::Decimal {
            return;
        }
        let width_key = if f.template { Key::Format } else { Key::Width };
        if f.digits.take().is_some() {
            self.v.at(
                Key::Digits,
                format!(
                    "`digits` counts decimal digits; with `encoding = \"{encoding}\"` set {}",
                    if encoding == Encoding::Sqids {
                        "`min_length`"
                    } else {
                        "`width`"
                    }
                ),
            );
        }
        match (encoding, f.width) {
            (Encoding::Sqids, Some(_)) if self.on(width_key) => {
                self.v.at(
                    width_key,
                    "a width does not apply to `encoding = \"sqids\"`: set `min_length` for \
                     the shortest ID",
                );
                f.width = None;
            }
            (Encoding::Crockford32, Some(w)) if usize::from(w) > CROCKFORD_MAX_WIDTH => {
                self.v.at(
                    width_key,
                    format!(
                        "a Crockford base 32 code of width {w} holds more than an `i64`: the \
                         width is at most {CROCKFORD_MAX_WIDTH} with `encoding = \"crockford32\"`"
                    ),
                );
                f.width = None;
            }
            _ => {}
        }
    }
}
