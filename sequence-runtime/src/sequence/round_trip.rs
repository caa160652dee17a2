//! Property tests of the way to an ID and back: for every encoding, check digit, prefix or
//! template, width and period, `parse_id(id_text(v)) == v`; and a text that is not the
//! `id_text` of the value it reads as is refused, but for the equivalences the guide lists
//! (Crockford codes: either case, `O` as `0`, `I` and `L` as `1`, hyphens ignored).

use proptest::prelude::*;

use super::Sequence;
use crate::options::{CheckDigit, Encoding, SequenceOptions};

/// A configuration of an ID's shape, as a test case builds it.
#[derive(Clone, Debug)]
struct IdCase {
    encoding: Encoding,
    check: Option<CheckDigit>,
    /// `prefix` (with `width`), or a `format` template.
    written: Written,
    start: i64,
}

#[derive(Clone, Debug)]
enum Written {
    Prefix(Option<&'static str>, Option<u8>),
    Format(&'static str),
}

const PREFIXES: [&str; 6] = [
    "'ORD-'",
    "YYMMDD",
    "'INV-'YYMMDD'-'",
    "YYYY",
    "YYMM",
    "YYMMDDHH",
];
const FORMATS: [&str; 6] = [
    "ACC-{n:08}-{check}",
    "{YYYY}/{n:05}/EU",
    "{YY}{MM}{n}",
    "T{n}",
    "{n:6}{check}",
    "R-{YYMMDD}-{n:4}-{check}",
];

fn shapes() -> impl Strategy<Value = IdCase> {
    let encoding = prop_oneof![
        Just(Encoding::Decimal),
        Just(Encoding::Crockford32),
        Just(Encoding::Sqids)
    ];
    let check = prop_oneof![
        Just(None),
        Just(Some(CheckDigit::Luhn)),
        Just(Some(CheckDigit::Damm)),
        Just(Some(CheckDigit::Mod97)),
        Just(Some(CheckDigit::Crockford)),
    ];
    let written = prop_oneof![
        (
            proptest::option::of(proptest::sample::select(&PREFIXES[..])),
            proptest::option::of(1_u8..=12),
        )
            .prop_map(|(p, w)| Written::Prefix(p, w)),
        proptest::sample::select(&FORMATS[..]).prop_map(Written::Format),
    ];
    let start = prop_oneof![Just(1_i64), Just(0), Just(1000), Just(-10)];
    (encoding, check, written, start).prop_map(|(encoding, check, written, start)| IdCase {
        encoding,
        check,
        written,
        start,
    })
}

impl IdCase {
    /// Whether the IDs are decimal numbers that start with a period's digits.
    fn dated_number(&self) -> bool {
        self.encoding == Encoding::Decimal
            && match self.written {
                Written::Prefix(Some(p), _) => !p.contains('\''),
                Written::Prefix(None, _) => false,
                Written::Format(f) => f.starts_with("{Y"),
            }
    }

    /// The sequence of this shape, if the rules accept it.
    fn sequence(&self) -> Option<Sequence> {
        let mut options = SequenceOptions::builder("t")
            .encoding(self.encoding)
            .start(self.start);
        if let Some(check) = self.check {
            options = options.check_digit(check);
        }
        match self.written {
            Written::Prefix(prefix, width) => {
                if let Some(prefix) = prefix {
                    options = options.prefix(prefix);
                }
                if let Some(width) = width {
                    options = options.width(width);
                }
            }
            Written::Format(format) => options = options.format(format),
        }
        Sequence::in_memory(options.build()).ok()
    }
}

/// The canonical periods of an instant, finest first: one of them is the sequence's.
fn periods(year: i16, month: i8, day: i8, hour: i8) -> [String; 4] {
    [
        format!("{year:04}{month:02}{day:02}{hour:02}"),
        format!("{year:04}{month:02}{day:02}"),
        format!("{year:04}{month:02}"),
        format!("{year:04}"),
    ]
}

/// The text of `value` in the first of `periods` the sequence takes (none without periods).
fn text(seq: &Sequence, value: i64, periods: &[String]) -> Option<(String, Option<String>)> {
    if let Ok(text) = seq.id_text(value, None) {
        return Some((text, None));
    }
    periods
        .iter()
        .find_map(|p| Some((seq.id_text(value, Some(p)).ok()?, Some(p.clone()))))
}

/// A text as the guide says it reads: for Crockford codes, in upper case, `O` as `0`, `I`
/// and `L` as `1`, without hyphens; the digits of a number that starts with a period, as the
/// integer they make (an integer ID drops the zeros of a year such as `05`); other texts as
/// they are.
fn read_as(shape: &IdCase, text: &str) -> String {
    if shape.dated_number() && !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.trim_start_matches('0').to_owned();
    }
    if shape.encoding != Encoding::Crockford32 {
        return text.to_owned();
    }
    text.chars()
        .filter(|&c| c != '-')
        .map(|c| match c.to_ascii_uppercase() {
            'O' => '0',
            'I' | 'L' => '1',
            c => c,
        })
        .collect()
}

/// An edit of a text: a character replaced, inserted or removed, or the case of one flipped.
#[derive(Clone, Debug)]
enum Edit {
    Replace(usize, char),
    Insert(usize, char),
    Remove(usize),
    Case(usize),
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let c = proptest::sample::select(
        "0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefoilOIL-/ "
            .chars()
            .collect::<Vec<_>>(),
    );
    let edit = prop_oneof![
        (any::<usize>(), c.clone()).prop_map(|(i, c)| Edit::Replace(i, c)),
        (any::<usize>(), c).prop_map(|(i, c)| Edit::Insert(i, c)),
        any::<usize>().prop_map(Edit::Remove),
        any::<usize>().prop_map(Edit::Case),
    ];
    proptest::collection::vec(edit, 1..=3)
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for edit in edits {
        let at = |i: usize, len: usize| if len == 0 { 0 } else { i % len };
        match *edit {
            Edit::Replace(i, c) if !chars.is_empty() => {
                let i = at(i, chars.len());
                chars[i] = c;
            }
            Edit::Insert(i, c) => {
                let i = at(i, chars.len() + 1);
                chars.insert(i, c);
            }
            Edit::Remove(i) if !chars.is_empty() => {
                let i = at(i, chars.len());
                chars.remove(i);
            }
            Edit::Case(i) if !chars.is_empty() => {
                let i = at(i, chars.len());
                let c = chars[i];
                chars[i] = if c.is_ascii_uppercase() {
                    c.to_ascii_lowercase()
                } else {
                    c.to_ascii_uppercase()
                };
            }
            _ => {}
        }
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(crate::property_cases::config(2000))]

    /// Every value's text reads back as the value and its period.
    #[test]
    fn every_id_reads_back_as_its_value(
        shape in shapes(),
        offset in 0_i64..100_000_000,
        (year, month, day, hour) in (1980_i16..=2070, 1_i8..=12, 1_i8..=28, 0_i8..=23),
    ) {
        let Some(seq) = shape.sequence() else { return Ok(()) };
        let value = shape.start + offset;
        let Some((text, period)) = text(&seq, value, &periods(year, month, day, hour)) else {
            // Beyond what the width holds: refused when written, nothing to read back.
            return Ok(());
        };
        let parsed = seq.parse_id(&text);
        prop_assert!(parsed.is_ok(), "{shape:?}: {text} -> {parsed:?}");
        let parsed = parsed.unwrap();
        prop_assert_eq!((parsed.value, parsed.period), (value, period), "{:?}: {}", shape, text);
    }

    /// A text that reads as a value is that value's text, but for the guide's equivalences.
    #[test]
    fn only_the_text_of_a_value_reads_as_it(
        shape in shapes(),
        offset in 0_i64..100_000,
        (year, month, day, hour) in (1980_i16..=2070, 1_i8..=12, 1_i8..=28, 0_i8..=23),
        edits in edits(),
    ) {
        let Some(seq) = shape.sequence() else { return Ok(()) };
        let Some((text, _)) = text(&seq, shape.start + offset, &periods(year, month, day, hour))
        else {
            return Ok(());
        };
        let edited = apply(&text, &edits);
        let Ok(parsed) = seq.parse_id(&edited) else { return Ok(()) };
        let Ok(own) = seq.id_text(parsed.value, parsed.period.as_deref()) else {
            return Err(TestCaseError::fail(format!(
                "{shape:?}: `{edited}` (edited from `{text}`) reads as {parsed:?}, which has no text"
            )));
        };
        prop_assert_eq!(
            read_as(&shape, &edited),
            read_as(&shape, &own),
            "{:?}: `{}` (edited from `{}`) reads as {:?}, whose text is `{}`",
            shape, edited, text, parsed, own
        );
    }
}

/// The cases that found the widths and leading zeros read past, kept as plain tests.
#[test]
fn codes_of_another_width_and_leading_zeros_are_refused() {
    let orders = Sequence::in_memory(
        SequenceOptions::builder("order")
            .prefix("'ORD-'")
            .width(5)
            .encoding(Encoding::Crockford32)
            .build(),
    )
    .unwrap();
    assert_eq!(orders.id_text(11, None).unwrap(), "ORD-0000B");
    assert_eq!(orders.parse_id("ord-0000b").map(|p| p.value).ok(), None);
    assert_eq!(orders.parse_id("ORD-0000b").unwrap().value, 11);
    assert_eq!(orders.parse_id("ORD-00-00B").unwrap().value, 11);
    for other in ["ORD-B", "ORD-0000000B", "ORD-00000B"] {
        assert!(orders.parse_id(other).is_err(), "{other}");
    }
    let plain = Sequence::in_memory(SequenceOptions::builder("plain").start(-10).build()).unwrap();
    assert_eq!(plain.parse_id("7").unwrap().value, 7);
    assert_eq!(plain.parse_id("-7").unwrap().value, -7);
    assert_eq!(plain.parse_id("0").unwrap().value, 0);
    for other in ["007", "-07", "-0", "-", "+7"] {
        assert!(plain.parse_id(other).is_err(), "{other}");
    }
    assert!(plain.id_text(-11, None).is_err(), "below a negative start");
    assert!(
        orders.id_text(32_i64.pow(5), None).is_err(),
        "wider than the width"
    );
}

/// A text without its check digit says so, rather than which character it does not end with.
#[test]
fn a_missing_check_digit_is_named() {
    let accounts = Sequence::in_memory(
        SequenceOptions::builder("account")
            .format("ACC-{n:08}-{check}")
            .check_digit(CheckDigit::Luhn)
            .build(),
    )
    .unwrap();
    assert_eq!(accounts.id_text(12_345, None).unwrap(), "ACC-00012345-5");
    let e = accounts.parse_id("ACC-00012345").unwrap_err().to_string();
    assert_eq!(
        e,
        "`ACC-00012345` is not an ID of sequence `account`: it has no check digit after its \
         number: expected `-` and 1 check digit"
    );
    let e = accounts.parse_id("ACC-0001234-4").unwrap_err().to_string();
    assert!(
        e.ends_with("its number has 7 characters, expected 8"),
        "{e}"
    );
}
