//! Parsing of `#[seq(...)]` attributes into typed, spanned values. Every error is collected;
//! none stops the parse of the other keys. An unknown key, or an unknown value of a key that
//! takes one of a set (`strategy`, `layout`, `batch`), is an error at its token.

mod value;

use std::time::Duration;

use proc_macro2::Span;
use sequence_rules::encoding::{CheckDigit, Encoding};
use sequence_rules::{suggest, Batch, Key, Layout, Stores, Strategy, Unique};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, LitStr};

use self::value::{expected_one_of, filter, names, path, skip_value, string, Value};
pub use self::value::{FilterEntry, WithSpan};

/// Keys accepted in a field-level `#[seq(...)]`.
pub const FIELD_KEYS: &[&str] = &["id"];

/// The struct-level keys, as written, with their typed values: a field per [`Key`], named as
/// the key (`krate` for `crate`).
#[derive(Default)]
pub struct StructAttrs {
    pub name: Option<WithSpan<String>>,
    pub batch: Option<WithSpan<Batch>>,
    pub prefix: Option<WithSpan<String>>,
    pub tz: Option<WithSpan<String>>,
    pub width: Option<WithSpan<u8>>,
    pub digits: Option<WithSpan<u8>>,
    pub format: Option<WithSpan<String>>,
    pub check_digit: Option<WithSpan<CheckDigit>>,
    pub encoding: Option<WithSpan<Encoding>>,
    pub alphabet: Option<WithSpan<String>>,
    pub min_length: Option<WithSpan<u32>>,
    pub start: Option<WithSpan<i64>>,
    pub max: Option<WithSpan<i64>>,
    pub strategy: Option<WithSpan<Strategy>>,
    pub shards: Option<WithSpan<u32>>,
    pub retries: Option<WithSpan<u32>>,
    pub scope: Option<WithSpan<Vec<WithSpan<String>>>>,
    pub counters: Option<WithSpan<String>>,
    pub layout: Option<WithSpan<Layout>>,
    pub field: Option<WithSpan<String>>,
    pub stores: Option<WithSpan<Stores>>,
    pub filter: Option<WithSpan<Vec<FilterEntry>>>,
    pub unique: Option<WithSpan<Unique>>,
    pub proxy: Option<WithSpan<String>>,
    pub gapless: Option<WithSpan<bool>>,
    pub transaction_timeout: Option<WithSpan<Duration>>,
    pub krate: Option<WithSpan<syn::Path>>,
}

impl StructAttrs {
    /// Parses the value of `key` and stores it; a second occurrence is an error.
    fn parse(
        &mut self,
        key: Key,
        meta: &ParseNestedMeta<'_>,
        errors: &mut Errors,
    ) -> syn::Result<()> {
        match key {
            Key::Name => set_once(&mut self.name, key, string(meta, key)?, errors),
            Key::Batch => set_once(&mut self.batch, key, Value::parse(meta, key)?, errors),
            Key::Prefix => set_once(&mut self.prefix, key, string(meta, key)?, errors),
            Key::Tz => set_once(&mut self.tz, key, string(meta, key)?, errors),
            Key::Width => set_once(&mut self.width, key, Value::parse(meta, key)?, errors),
            Key::Digits => set_once(&mut self.digits, key, Value::parse(meta, key)?, errors),
            Key::Format => set_once(&mut self.format, key, string(meta, key)?, errors),
            Key::CheckDigit => {
                set_once(&mut self.check_digit, key, Value::parse(meta, key)?, errors)
            }
            Key::Encoding => set_once(&mut self.encoding, key, Value::parse(meta, key)?, errors),
            Key::Alphabet => set_once(&mut self.alphabet, key, string(meta, key)?, errors),
            Key::MinLength => set_once(&mut self.min_length, key, Value::parse(meta, key)?, errors),
            Key::Start => set_once(&mut self.start, key, Value::parse(meta, key)?, errors),
            Key::Max => set_once(&mut self.max, key, Value::parse(meta, key)?, errors),
            Key::Strategy => set_once(&mut self.strategy, key, Value::parse(meta, key)?, errors),
            Key::Shards => set_once(&mut self.shards, key, Value::parse(meta, key)?, errors),
            Key::Retries => set_once(&mut self.retries, key, Value::parse(meta, key)?, errors),
            Key::Scope => set_once(&mut self.scope, key, names(meta, key)?, errors),
            Key::Counters => set_once(&mut self.counters, key, string(meta, key)?, errors),
            Key::Layout => set_once(&mut self.layout, key, Value::parse(meta, key)?, errors),
            Key::Field => set_once(&mut self.field, key, string(meta, key)?, errors),
            Key::Stores => set_once(&mut self.stores, key, Value::parse(meta, key)?, errors),
            Key::Filter => set_once(&mut self.filter, key, filter(meta, key)?, errors),
            Key::Unique => set_once(&mut self.unique, key, Value::parse(meta, key)?, errors),
            Key::Proxy => set_once(&mut self.proxy, key, string(meta, key)?, errors),
            Key::Gapless => set_once(&mut self.gapless, key, Value::parse(meta, key)?, errors),
            Key::TransactionTimeout => set_once(
                &mut self.transaction_timeout,
                key,
                Value::parse(meta, key)?,
                errors,
            ),
            Key::Crate => set_once(&mut self.krate, key, path(meta, key)?, errors),
        }
        Ok(())
    }

    /// Where `key` was written, if it was.
    pub fn span_of(&self, key: Key) -> Option<Span> {
        fn at<T>(value: &Option<WithSpan<T>>) -> Option<Span> {
            value.as_ref().map(|v| v.span)
        }
        match key {
            Key::Name => at(&self.name),
            Key::Batch => at(&self.batch),
            Key::Prefix => at(&self.prefix),
            Key::Tz => at(&self.tz),
            Key::Width => at(&self.width),
            Key::Digits => at(&self.digits),
            Key::Format => at(&self.format),
            Key::CheckDigit => at(&self.check_digit),
            Key::Encoding => at(&self.encoding),
            Key::Alphabet => at(&self.alphabet),
            Key::MinLength => at(&self.min_length),
            Key::Start => at(&self.start),
            Key::Max => at(&self.max),
            Key::Strategy => at(&self.strategy),
            Key::Shards => at(&self.shards),
            Key::Retries => at(&self.retries),
            Key::Scope => at(&self.scope),
            Key::Counters => at(&self.counters),
            Key::Layout => at(&self.layout),
            Key::Field => at(&self.field),
            Key::Stores => at(&self.stores),
            Key::Filter => at(&self.filter),
            Key::Unique => at(&self.unique),
            Key::Proxy => at(&self.proxy),
            Key::Gapless => at(&self.gapless),
            Key::TransactionTimeout => at(&self.transaction_timeout),
            Key::Crate => at(&self.krate),
        }
    }
}

/// Collects errors so that all of them are reported together. The errors cannot be lost: an
/// `Errors` dropped without [`finish`](Self::finish) while it holds any panics (as serde's
/// `Ctxt` does), which the derive's tests would show.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Drop for Errors {
    fn drop(&mut self) {
        if self.0.is_some() && !std::thread::panicking() {
            panic!("`Errors` dropped with errors unreported: call `finish`");
        }
    }
}

impl Errors {
    pub fn push(&mut self, err: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(err),
            None => self.0 = Some(err),
        }
    }

    pub fn at(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.push(syn::Error::new(span, msg));
    }

    /// Whether no error was reported.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The errors collected, combined into one; no error is `Ok`.
    pub fn finish(mut self) -> Result<(), syn::Error> {
        self.0.take().map_or(Ok(()), Err)
    }
}

/// Sets a key once; a second occurrence is an error at the second one.
fn set_once<T>(slot: &mut Option<WithSpan<T>>, key: Key, value: WithSpan<T>, errors: &mut Errors) {
    if slot.is_some() {
        errors.at(value.span, format!("duplicate `seq` key `{key}`"));
    } else {
        *slot = Some(value);
    }
}

/// Parses every struct-level `#[seq(...)]` (in any order, split over several attributes).
pub fn struct_attrs(attrs: &[Attribute], errors: &mut Errors) -> StructAttrs {
    let mut out = StructAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("seq")) {
        let parsed = attr.parse_nested_meta(|meta| {
            let written = meta.path.get_ident().map(ToString::to_string);
            let Some(key) = written.as_deref().and_then(Key::from_name) else {
                errors.at(
                    meta.path.span(),
                    match written {
                        Some(w) => match Key::renamed(&w) {
                            Some(now) => now.to_owned(),
                            None => format!(
                                "unknown `seq` key `{w}`, expected one of: {}{}",
                                Key::expected(),
                                suggest::did_you_mean(&w, Key::ALL.iter().map(|k| k.name()))
                            ),
                        },
                        None => format!("unknown `seq` key, expected one of: {}", Key::expected()),
                    },
                );
                skip_value(&meta);
                return Ok(());
            };
            if let Err(e) = out.parse(key, &meta, errors) {
                errors.push(e);
                skip_value(&meta);
            }
            Ok(())
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    out
}

/// The path to the facade crate given by `#[seq(crate = "...")]` on a type whose derive takes
/// no other key (`IdValue`), or `::mongo_sequence`.
pub fn crate_path(attrs: &[Attribute]) -> syn::Result<syn::Path> {
    let mut krate = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("seq")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") && krate.is_none() {
                krate = Some(path(&meta, Key::Crate)?.value);
                Ok(())
            } else {
                Err(meta.error("`IdValue` takes one `seq` key, `crate`"))
            }
        })?;
    }
    Ok(krate.unwrap_or_else(|| syn::parse_quote!(::mongo_sequence)))
}

/// Whether a field carries `#[seq(id)]`; misuse is reported to `errors`.
pub fn field_is_id(attrs: &[Attribute], errors: &mut Errors) -> Option<Span> {
    let mut found = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("seq")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("id") {
                if meta.input.peek(syn::Token![=]) || meta.input.peek(syn::token::Paren) {
                    let value: proc_macro2::TokenStream = meta.input.fork().parse()?;
                    let value: proc_macro2::TokenStream = value
                        .into_iter()
                        .take_while(|t| !matches!(t, proc_macro2::TokenTree::Punct(p) if p.as_char() == ','))
                        .collect();
                    skip_value(&meta);
                    errors.push(syn::Error::new_spanned(
                        value,
                        "`id` takes no value: write `#[seq(id)]`",
                    ));
                    found.get_or_insert(meta.path.span());
                } else if found.is_some() {
                    errors.at(meta.path.span(), "duplicate `seq` key `id`");
                } else {
                    found = Some(meta.path.span());
                }
            } else {
                let written = meta
                    .path
                    .get_ident()
                    .map_or_else(|| "?".to_owned(), ToString::to_string);
                errors.at(
                    meta.path.span(),
                    format!(
                        "unknown field-level `seq` key `{written}`, expected one of: {}{}",
                        expected_one_of(FIELD_KEYS),
                        suggest::did_you_mean(&written, FIELD_KEYS.iter().copied())
                    ),
                );
                skip_value(&meta);
            }
            Ok(())
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    found
}

/// Whether a field is serialized as `_id` through `#[serde(rename = "_id")]` (or the
/// `rename(serialize = "_id")` form).
pub fn serde_renamed_to_id(attrs: &[Attribute]) -> bool {
    let mut renamed = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                if meta.input.peek(syn::Token![=]) {
                    let lit: LitStr = meta.value()?.parse()?;
                    renamed |= lit.value() == "_id";
                } else {
                    meta.parse_nested_meta(|inner| {
                        let lit: LitStr = inner.value()?.parse()?;
                        if inner.path.is_ident("serialize") {
                            renamed |= lit.value() == "_id";
                        }
                        Ok(())
                    })?;
                }
            } else {
                skip_value(&meta);
            }
            Ok(())
        });
    }
    renamed
}

/// Whether a field has its own serde serializer: `#[serde(with = "...")]` or
/// `#[serde(serialize_with = "...")]`.
pub fn serde_has_with(attrs: &[Attribute]) -> bool {
    let mut with = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            with |= meta.path.is_ident("with") || meta.path.is_ident("serialize_with");
            skip_value(&meta);
            Ok(())
        });
    }
    with
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "dropped with errors unreported")]
    fn errors_cannot_be_dropped_unreported() {
        let mut errors = Errors::default();
        errors.at(Span::call_site(), "unknown `seq` key `bach`");
        drop(errors);
    }

    #[test]
    fn every_error_is_reported_together() {
        let mut errors = Errors::default();
        assert!(errors.is_empty());
        errors.at(Span::call_site(), "first");
        errors.at(Span::call_site(), "second");
        let all: Vec<String> = errors
            .finish()
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(all, ["first", "second"]);
        assert!(Errors::default().finish().is_ok());
    }
}
