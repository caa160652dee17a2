//! Compile-time behaviour of `#[derive(SequentialId)]`: every mistake is one precise error
//! (`tests/ui/fail/<category>/`), and the runtime, which checks `SequenceOptions` with the same
//! rules, refuses the same mistakes with the same messages. (Every documented configuration
//! compiling without a warning, `tests/ui/pass`, is a test binary of its own: see
//! `Cargo.toml`.)
//!
//! After an intended change of a message, regenerate the expected output with
//! `TRYBUILD=overwrite cargo test -p sequence-ui --test ui` and review the `.stderr` diff.

use std::time::Duration;

use mongo_sequence::options::{
    filter, CheckDigit, Encoding, Layout, SequenceOptionsBuilder, Stores, Unique,
};
use mongo_sequence::{Batch, Error, SequenceOptions, Strategy};
use sequence_rules::{defaults, Key};

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*/*.rs");
}

fn opts(name: &str) -> mongo_sequence::options::SequenceOptionsBuilder {
    SequenceOptions::builder(name)
}

/// The fail cases whose `#[seq(...)]` keys the runtime can take but whose mistake is about the
/// struct itself, which runtime options do not describe (its fields, its ID field), with why.
const ABOUT_THE_STRUCT: &[(&str, &str)] = &[
    ("scope/id_field", "`scope` names the struct's ID field"),
    (
        "scope/misspelled_scope_field",
        "`scope` names a field the struct does not have, and another is close",
    ),
    (
        "scope/missing_field",
        "`scope` names a field the struct does not have",
    ),
    ("scope/on_document_id", "the struct's ID field is its `_id`"),
    (
        "strategy/random_id_field_not_underscore_id",
        "the struct's ID field is not its `_id`",
    ),
];

/// A key of `#[seq(...)]` as written in a case: its name and its literal value (`None` for a
/// flag such as `gapless`).
type WrittenKey = (String, Option<syn::Expr>);

/// The struct-level `#[seq(...)]` keys of the case file `path`, and the struct's name; `None`
/// if they do not parse as `key = value` pairs (a case about the attribute's syntax).
fn written_keys(path: &std::path::Path) -> Option<(String, Vec<WrittenKey>)> {
    let file = syn::parse_file(&std::fs::read_to_string(path).ok()?).ok()?;
    let item = file.items.iter().find_map(|item| match item {
        syn::Item::Struct(s) => Some(s),
        _ => None,
    })?;
    Some((item.ident.to_string(), keys_of(item)?))
}

/// The struct-level `#[seq(...)]` keys of `item`; `None` if they do not parse as `key = value`
/// pairs or a key is written twice.
fn keys_of(item: &syn::ItemStruct) -> Option<Vec<WrittenKey>> {
    let mut keys = Vec::new();
    for attr in item.attrs.iter().filter(|a| a.path().is_ident("seq")) {
        attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string);
            let value = if meta.input.peek(syn::Token![=]) {
                Some(meta.value()?.parse::<syn::Expr>()?)
            } else if meta.input.peek(syn::token::Paren) {
                // `filter(a = x, b = y)`, as the text the runtime reads: `a = x, b = y`.
                let mut fields = Vec::new();
                meta.parse_nested_meta(|inner| {
                    let field = inner.path.get_ident().map(ToString::to_string);
                    let value = inner.value()?.parse::<syn::Expr>()?;
                    let value = quote::ToTokens::to_token_stream(&value).to_string();
                    fields.push(format!("{} = {value}", field.unwrap_or_default()));
                    Ok(())
                })?;
                let text = syn::LitStr::new(&fields.join(", "), proc_macro2::Span::call_site());
                Some(syn::parse_quote!(#text))
            } else {
                None
            };
            keys.push((key.unwrap_or_default(), value));
            Ok(())
        })
        .ok()?;
    }
    let mut names: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return None; // a key written twice
    }
    Some(keys)
}

/// Every struct deriving `SequentialId` in `items` (and in their modules), with its name and
/// its keys (`None` where they do not parse).
fn models(items: &[syn::Item], out: &mut Vec<(String, Option<Vec<WrittenKey>>)>) {
    for item in items {
        match item {
            syn::Item::Struct(s) if derives_sequential_id(s) => {
                out.push((s.ident.to_string(), keys_of(s)));
            }
            syn::Item::Mod(m) => models(m.content.as_ref().map_or(&[], |(_, i)| i), out),
            _ => {}
        }
    }
}

/// Whether `item` has `SequentialId` among its derives.
fn derives_sequential_id(item: &syn::ItemStruct) -> bool {
    item.attrs
        .iter()
        .filter(|a| a.path().is_ident("derive"))
        .any(|a| {
            a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().contains("SequentialId"))
        })
}

/// A value as written in a case, read as the type of a runtime option.
trait Written: Sized {
    fn read(value: &Option<syn::Expr>) -> Option<Self>;
}

fn lit(value: &Option<syn::Expr>) -> Option<&syn::Lit> {
    match value.as_ref()? {
        syn::Expr::Lit(l) => Some(&l.lit),
        _ => None,
    }
}

/// An integer, possibly negated.
fn int<T: std::str::FromStr>(value: &Option<syn::Expr>) -> Option<T> {
    match value.as_ref()? {
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
            let digits = int::<u128>(&Some((*u.expr).clone()))?;
            format!("-{digits}").parse().ok()
        }
        _ => match lit(value)? {
            syn::Lit::Int(i) => i.base10_digits().parse().ok(),
            _ => None,
        },
    }
}

impl Written for String {
    fn read(value: &Option<syn::Expr>) -> Option<Self> {
        match lit(value)? {
            syn::Lit::Str(s) => Some(s.value()),
            _ => None,
        }
    }
}

impl Written for Vec<String> {
    fn read(value: &Option<syn::Expr>) -> Option<Self> {
        match value.as_ref()? {
            syn::Expr::Array(a) => a
                .elems
                .iter()
                .map(|e| String::read(&Some(e.clone())))
                .collect(),
            _ => Some(vec![String::read(value)?]),
        }
    }
}

macro_rules! written_integers {
    ($($ty:ty),*) => {$(
        impl Written for $ty {
            fn read(value: &Option<syn::Expr>) -> Option<Self> {
                int(value)
            }
        }
    )*};
}

written_integers!(u8, u32, i64);

impl Written for bool {
    fn read(value: &Option<syn::Expr>) -> Option<Self> {
        match value {
            None => Some(true),
            Some(_) => match lit(value)? {
                syn::Lit::Bool(b) => Some(b.value),
                _ => None,
            },
        }
    }
}

impl Written for Batch {
    fn read(value: &Option<syn::Expr>) -> Option<Self> {
        match value.as_ref()? {
            syn::Expr::Range(r) if matches!(r.limits, syn::RangeLimits::Closed(_)) => {
                let bound = |e: &Option<Box<syn::Expr>>| int::<u64>(&e.as_deref().cloned());
                Some(Batch::from(bound(&r.start)?..=bound(&r.end)?))
            }
            _ => Some(Batch::Fixed(int(value)?)),
        }
    }
}

impl Written for Duration {
    fn read(value: &Option<syn::Expr>) -> Option<Self> {
        let signed: mongo_sequence::jiff::SignedDuration = String::read(value)?.parse().ok()?;
        signed.try_into().ok()
    }
}

/// Values named by a string (`strategy`, `layout`, `stores`).
macro_rules! written_names {
    ($($ty:ty),*) => {$(
        impl Written for $ty {
            fn read(value: &Option<syn::Expr>) -> Option<Self> {
                let name = String::read(value)?;
                <$ty>::ALL.into_iter().find(|v| v.name() == name)
            }
        }
    )*};
}

written_names!(Strategy, Layout, Stores, Unique, CheckDigit, Encoding);

/// What the runtime does with a key written with its default value, which it cannot tell
/// from leaving the key out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Defaults {
    /// The configuration is not expressible: a compile-fail case about the key would not be.
    Refused,
    /// The default is left as it is: an accepted configuration stays accepted.
    Kept,
}

/// `b` with `set` applied to the value written for a key whose option defaults to `default`;
/// that default itself as `defaults` says.
fn given<T: Written + PartialEq>(
    b: SequenceOptionsBuilder,
    value: &Option<syn::Expr>,
    default: T,
    defaults: Defaults,
    set: impl FnOnce(SequenceOptionsBuilder, T) -> SequenceOptionsBuilder,
) -> Option<SequenceOptionsBuilder> {
    let value = T::read(value)?;
    if value == default {
        return (defaults == Defaults::Kept).then_some(b);
    }
    Some(set(b, value))
}

/// The builder with the option of `key` set as written, or `None` if the runtime cannot say it:
/// a key only the derive has, a value of another type than the option's, or (as `defaults`
/// says) the default value.
fn set_option(
    b: SequenceOptionsBuilder,
    key: &str,
    value: &Option<syn::Expr>,
    defaults: Defaults,
) -> Option<SequenceOptionsBuilder> {
    let d = defaults;
    match Key::from_name(key)? {
        Key::Name => Some(b),
        Key::Batch => given(b, value, Batch::DEFAULT, d, |b, v| b.batch(v)),
        Key::Prefix => Some(b.prefix(String::read(value)?)),
        Key::Tz => Some(b.tz(String::read(value)?)),
        Key::Width => Some(b.width(u8::read(value)?)),
        Key::Digits => Some(b.digits(u8::read(value)?)),
        Key::Format => Some(b.format(String::read(value)?)),
        Key::CheckDigit => Some(b.check_digit(CheckDigit::read(value)?)),
        Key::Encoding => given(b, value, Encoding::Decimal, d, |b, v| b.encoding(v)),
        Key::Alphabet => Some(b.alphabet(String::read(value)?)),
        Key::MinLength => given(b, value, 0, d, |b, v| b.min_length(v)),
        Key::Start => given(b, value, defaults::START, d, |b, v| b.start(v)),
        Key::Max => given(b, value, defaults::MAX, d, |b, v| b.max(v)),
        Key::Strategy => given(b, value, Strategy::Counter, d, |b, v| b.strategy(v)),
        Key::Shards => given(b, value, defaults::SHARDS, d, |b, v| b.shards(v)),
        Key::Retries => given(b, value, defaults::RETRIES, d, |b, v| b.retries(v)),
        Key::Scope => Some(b.scope(<Vec<String>>::read(value)?)),
        Key::Counters => given(b, value, defaults::COUNTERS.to_owned(), d, |b, v| {
            b.counters(v)
        }),
        Key::Layout => given(b, value, Layout::Default, d, |b, v| b.layout(v)),
        Key::Field => given(b, value, defaults::COUNTER_FIELD.to_owned(), d, |b, v| {
            b.field(v)
        }),
        Key::Stores => given(b, value, Stores::LastIssued, d, |b, v| b.stores(v)),
        Key::Filter => Some(b.filter(filter::parse(&String::read(value)?).ok()?)),
        Key::Unique => given(b, value, Unique::Index, d, |b, v| b.unique(v)),
        Key::Proxy => Some(b.proxy(String::read(value)?)),
        Key::Gapless => given(b, value, false, d, |b, v| b.gapless(v)),
        Key::TransactionTimeout => given(b, value, defaults::TRANSACTION_TIMEOUT, d, |b, v| {
            b.transaction_timeout(v)
        }),
        // The path of the facade is the derive's alone, and changes no rule.
        Key::Crate => (defaults == Defaults::Kept).then_some(b),
    }
}

/// The runtime options that say what `keys` say, or `None` if runtime options cannot.
fn runtime_options(name: &str, keys: &[WrittenKey], defaults: Defaults) -> Option<SequenceOptions> {
    let name = keys.iter().find(|(k, _)| k == "name").map_or_else(
        || Some(defaults::counter_name(name)),
        |(_, v)| String::read(v),
    )?;
    let mut b = opts(&name);
    for (key, value) in keys {
        b = set_option(b, key, value, defaults)?;
    }
    Some(b.build())
}

/// The runtime's message for a broken rule: the rule's own message, without the variant's
/// preamble.
fn rule_message(e: Error) -> String {
    match e {
        Error::InvalidConfig { message, .. } => message,
        e @ Error::InvalidName { .. } => e.to_string(),
        other => panic!("expected a broken rule, got {other:?}"),
    }
}

/// Every compile-fail case that runtime options can express, found by reading the case files:
/// the runtime refuses it with the derive's message. The cases it cannot express are about the
/// Rust side of a model (its ID field's type, checked by the compiler: `error[E...]`; its
/// fields, listed in [`ABOUT_THE_STRUCT`]) or the syntax of the attribute.
#[test]
fn the_runtime_refuses_what_the_derive_refuses_with_the_same_message() {
    let mut compared = Vec::new();
    let mut about_the_struct = Vec::new();
    let mut not_expressible = Vec::new();
    let mut files: Vec<_> = glob_cases();
    files.sort();
    for path in files {
        let case = path
            .strip_prefix("tests/ui/fail")
            .unwrap()
            .with_extension("")
            .to_string_lossy()
            .into_owned();
        let stderr = std::fs::read_to_string(path.with_extension("stderr")).unwrap();
        let errors: Vec<&str> = stderr
            .lines()
            .filter_map(|l| l.strip_prefix("error: "))
            .collect();
        let Some((name, keys)) = written_keys(&path) else {
            not_expressible.push((case, "the syntax of the attribute"));
            continue;
        };
        if keys.is_empty() {
            not_expressible.push((case, "no key: the struct's shape or its fields"));
            continue;
        }
        let Some(options) = runtime_options(&name, &keys, Defaults::Refused) else {
            not_expressible.push((
                case,
                "a value no option's type holds, the default value, or a derive-only key",
            ));
            continue;
        };
        // The rules about the ID field's type: a compiler error (E0080) for a type of its own,
        // a plain error naming the type for a primitive integer; runtime options have no type.
        if errors.len() != 1 || about_the_id_type(errors[0]) {
            not_expressible.push((case, "a compiler error about the ID field's type"));
            continue;
        }
        if let Some((_, why)) = ABOUT_THE_STRUCT.iter().find(|(c, _)| *c == case) {
            let runtime = options.validate().err().map(rule_message);
            assert_ne!(
                runtime.as_deref(),
                Some(errors[0]),
                "{case} is listed as about the struct ({why}), but the runtime refuses it too"
            );
            about_the_struct.push(case);
            continue;
        }
        let runtime = options
            .validate()
            .map(|_| "accepted".to_owned())
            .unwrap_or_else(rule_message);
        assert_eq!(runtime, errors[0], "{case}");
        compared.push(case);
    }
    assert_eq!(
        about_the_struct.len(),
        ABOUT_THE_STRUCT.len(),
        "every case listed as about the struct exists: {about_the_struct:?}"
    );
    eprintln!("{} cases compared: {compared:?}", compared.len());
    eprintln!("not expressible as runtime options: {not_expressible:#?}");
    // The rules of the keys (names, batch, bounds, digits, width, prefix, tz, strategies,
    // scope, layout, gapless) are each covered by several cases.
    assert!(
        compared.len() >= 40,
        "{} cases compared: {compared:?}",
        compared.len()
    );
}

/// Whether a derive error is one of the rules about the ID field's type, which name the type
/// (`` `i32` cannot hold IDs of 12 digits ``, `` an integer ID field (`i64`) cannot hold… ``).
fn about_the_id_type(message: &str) -> bool {
    ["`i32`", "`i64`", "`u32`", "`u64`"]
        .iter()
        .any(|ty| message.contains(ty))
}

/// The compile-fail case files, `tests/ui/fail/<category>/<case>.rs`.
fn glob_cases() -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for category in std::fs::read_dir("tests/ui/fail").unwrap() {
        for case in std::fs::read_dir(category.unwrap().path()).unwrap() {
            let path = case.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

/// Every model of the pass cases (`tests/ui/pass`), read from the files, as runtime options:
/// the runtime accepts each configuration the derive accepts.
#[test]
fn the_runtime_accepts_what_the_derive_accepts() {
    let mut files: Vec<_> = std::fs::read_dir("tests/ui/pass")
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let mut accepted = Vec::new();
    for path in files {
        let file = syn::parse_file(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut found = Vec::new();
        models(&file.items, &mut found);
        for (name, keys) in found {
            let case = format!("{}: {name}", path.display());
            let keys = keys.unwrap_or_else(|| panic!("{case}: keys that do not parse"));
            let options = runtime_options(&name, &keys, Defaults::Kept)
                .unwrap_or_else(|| panic!("{case}: keys the runtime cannot express"));
            if let Err(e) = options.validate() {
                panic!("{case}: {e}");
            }
            accepted.push(case);
        }
    }
    eprintln!("{} configurations accepted: {accepted:#?}", accepted.len());
    // Every pass case holds at least one model; most hold several.
    assert!(accepted.len() >= 30, "{accepted:#?}");
}

/// The old name of the `ranges` strategy is refused by the derive and by parsing, both naming
/// the new one.
#[test]
fn the_old_strategy_name_is_refused_with_the_new_one() {
    let stderr = std::fs::read_to_string("tests/ui/fail/strategy/renamed_sharded.stderr").unwrap();
    let derive = stderr.lines().find_map(|l| l.strip_prefix("error: "));
    let parsed = "sharded".parse::<Strategy>().unwrap_err().to_string();
    assert_eq!(derive, Some(parsed.as_str()));
    assert!(parsed.contains("write `strategy = \"ranges\"`"), "{parsed}");
    assert_eq!("ranges".parse::<Strategy>(), Ok(Strategy::Ranges));
}
