//! Parsing of `#[seq(...)]` attributes into typed, spanned values. Every error is collected;
//! none stops the parse of the other keys. An unknown key, or an unknown value of a key that
//! takes one of a set (`strategy`, `layout`, `batch`), is an error at its token.

use std::time::Duration;

use proc_macro2::Span;
use sequence_rules::limits::MAX_DIGITS;
use sequence_rules::{Batch, Key, Layout, Stores, Strategy, Unique};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, ExprRange, ExprUnary, Lit, LitStr, RangeLimits, UnOp};

/// Keys accepted in a field-level `#[seq(...)]`.
pub const FIELD_KEYS: &[&str] = &["id"];

/// A value and the span of the tokens it came from.
#[derive(Clone, Debug)]
pub struct WithSpan<T> {
    pub value: T,
    pub span: Span,
}

impl<T> WithSpan<T> {
    fn new(value: T, span: Span) -> Self {
        WithSpan { value, span }
    }
}

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
            Key::Unique => at(&self.unique),
            Key::Proxy => at(&self.proxy),
            Key::Gapless => at(&self.gapless),
            Key::TransactionTimeout => at(&self.transaction_timeout),
            Key::Crate => at(&self.krate),
        }
    }
}

/// Collects errors so that all of them are reported together.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

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

    pub fn finish(self) -> Result<(), syn::Error> {
        self.0.map_or(Ok(()), Err)
    }
}

fn expected_one_of(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
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
                                "unknown `seq` key `{w}`, expected one of: {}",
                                Key::expected()
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
                errors.at(
                    meta.path.span(),
                    format!(
                        "unknown field-level `seq` key `{}`, expected one of: {}",
                        meta.path
                            .get_ident()
                            .map_or_else(|| "?".to_owned(), ToString::to_string),
                        expected_one_of(FIELD_KEYS)
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

/// Consumes whatever value follows a key (`= expr` or `(...)`), so parsing can go on.
fn skip_value(meta: &ParseNestedMeta<'_>) {
    if meta.input.peek(syn::Token![=]) {
        let _ = meta.value().and_then(|v| v.parse::<Expr>());
    } else if meta.input.peek(syn::token::Paren) {
        let _ = meta.parse_nested_meta(|inner| {
            skip_value(&inner);
            Ok(())
        });
    }
}

fn value_expr(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<Expr> {
    if !meta.input.peek(syn::Token![=]) {
        return Err(meta.error(format!("`{key}` needs a value: `{key} = ...`")));
    }
    meta.value()?.parse()
}

fn string(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<String>> {
    match value_expr(meta, key)? {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(WithSpan::new(s.value(), s.span())),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` must be a string literal"),
        )),
    }
}

/// The span of all of `tokens` where the compiler can join spans, else of the first token.
fn spanned(tokens: &impl quote::ToTokens) -> Span {
    let mut iter = tokens.to_token_stream().into_iter();
    let first = iter.next().map_or_else(Span::call_site, |t| t.span());
    iter.last()
        .and_then(|last| first.join(last.span()))
        .unwrap_or(first)
}

/// An integer literal, possibly negated, as i128.
fn integer(expr: &Expr) -> Option<syn::Result<i128>> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => Some(i.base10_parse::<i128>()),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(ExprLit {
                lit: Lit::Int(i), ..
            }) => Some(i.base10_parse::<i128>().map(|v| -v)),
            _ => None,
        },
        Expr::Group(g) => integer(&g.expr),
        _ => None,
    }
}

/// A value of a key, parsed from the tokens after `key =`.
trait Value: Sized {
    fn parse(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Self>>;
}

/// An integer literal of type `T`, or an error that says which integers `key` takes.
fn integer_of<T: TryFrom<i128>>(
    meta: &ParseNestedMeta<'_>,
    key: Key,
    what: &str,
) -> syn::Result<WithSpan<T>> {
    let expr = value_expr(meta, key)?;
    match integer(&expr).and_then(Result::ok).map(T::try_from) {
        Some(Ok(v)) => Ok(WithSpan::new(v, spanned(&expr))),
        _ => Err(syn::Error::new_spanned(
            &expr,
            format!("`{key}` must be {what}"),
        )),
    }
}

impl Value for u8 {
    /// A count of digits (`width`, `digits`): a value past `u8` gets the rule's own message.
    fn parse(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Self>> {
        let expr = value_expr(meta, key)?;
        match integer(&expr).and_then(Result::ok) {
            Some(v) => u8::try_from(v)
                .map(|v| WithSpan::new(v, spanned(&expr)))
                .map_err(|_| {
                    syn::Error::new_spanned(
                        &expr,
                        format!("`{key}` must be between 1 and {MAX_DIGITS}, got {v}"),
                    )
                }),
            None => Err(syn::Error::new_spanned(
                &expr,
                format!("`{key}` must be a positive integer"),
            )),
        }
    }
}

impl Value for u32 {
    fn parse(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Self>> {
        integer_of(meta, key, "a positive integer that fits in `u32`")
    }
}

impl Value for i64 {
    fn parse(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Self>> {
        integer_of(meta, key, "an integer that fits in `i64`")
    }
}

impl Value for Batch {
    /// `batch = 25`, or `batch = 10..=1000`.
    fn parse(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Self>> {
        let expr = value_expr(meta, key)?;
        let span = spanned(&expr);
        let bound = |e: &Option<Box<Expr>>| {
            e.as_deref()
                .and_then(integer)
                .and_then(Result::ok)
                .and_then(|v| u64::try_from(v).ok())
        };
        let batch = match &expr {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) if s.value() == "auto" => {
                return Err(syn::Error::new(
                    span,
                    "an adaptive `batch` is written with its bounds: `batch = 10..=10000`",
                ))
            }
            Expr::Range(ExprRange {
                start,
                limits: RangeLimits::Closed(_),
                end,
                ..
            }) => bound(start)
                .zip(bound(end))
                .map(|(min, max)| Batch::from(min..=max)),
            range @ Expr::Range(_) => {
                return Err(syn::Error::new_spanned(
                    range,
                    "the bounds of an adaptive `batch` are written `min..=max`, both included: `batch = 10..=10000`",
                ))
            }
            e => integer(e)
                .and_then(Result::ok)
                .and_then(|v| u64::try_from(v).ok())
                .map(Batch::Fixed),
        };
        batch.map(|b| WithSpan::new(b, span)).ok_or_else(|| {
            syn::Error::new_spanned(
                &expr,
                "`batch` must be a positive integer (`batch = 25`) or the bounds of an adaptive batch (`batch = 10..=10000`)",
            )
        })
    }
}

impl Value for Duration {
    /// A string with units, such as `"30s"`, `"500ms"` or `"2m"`.
    fn parse(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Self>> {
        let s = string(meta, key)?;
        let wrong = || {
            syn::Error::new(
                s.span,
                format!(
                    "`{key}` must be a duration with its unit, such as \"30s\", \"500ms\" or \"2m\", got \"{}\"",
                    s.value
                ),
            )
        };
        let signed: jiff::SignedDuration = s.value.parse().map_err(|_| wrong())?;
        let duration = Duration::try_from(signed).map_err(|_| wrong())?;
        Ok(WithSpan::new(duration, s.span))
    }
}

/// A string literal naming one of `names`, turned into its value by `from_name`.
fn one_of<T>(
    meta: &ParseNestedMeta<'_>,
    key: Key,
    what: &str,
    names: &[&str],
    from_name: impl Fn(&str) -> Option<T>,
) -> syn::Result<WithSpan<T>> {
    let s = string(meta, key)?;
    match from_name(&s.value) {
        Some(value) => Ok(WithSpan::new(value, s.span)),
        None => Err(syn::Error::new(
            s.span,
            format!(
                "unknown {what} \"{}\", expected one of: {}",
                s.value,
                expected_one_of(names)
            ),
        )),
    }
}

impl Value for Strategy {
    fn parse(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Self>> {
        let s = string(meta, key)?;
        Strategy::parse(&s.value)
            .map(|strategy| WithSpan::new(strategy, s.span))
            .map_err(|message| syn::Error::new(s.span, message))
    }
}

impl Value for Stores {
    fn parse(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Self>> {
        let names = Stores::ALL.map(Stores::name);
        one_of(meta, key, "`stores` value", &names, Stores::from_name)
    }
}

impl Value for Unique {
    fn parse(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Self>> {
        let names = Unique::ALL.map(Unique::name);
        one_of(meta, key, "`unique` value", &names, Unique::from_name)
    }
}

impl Value for Layout {
    fn parse(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Self>> {
        let names = Layout::ALL.map(Layout::name);
        one_of(meta, key, "layout", &names, Layout::from_name)
    }
}

impl Value for bool {
    /// `gapless`, or `gapless = true`/`false`.
    fn parse(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Self>> {
        let span = meta.path.span();
        if !meta.input.peek(syn::Token![=]) {
            return Ok(WithSpan::new(true, span));
        }
        match meta.value()?.parse::<Expr>()? {
            Expr::Lit(ExprLit {
                lit: Lit::Bool(b), ..
            }) => Ok(WithSpan::new(b.value, b.span())),
            other => Err(syn::Error::new_spanned(
                other,
                format!("`{key}` must be `true` or `false`"),
            )),
        }
    }
}

fn path(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<syn::Path>> {
    let s = string(meta, key)?;
    let path = syn::parse_str::<syn::Path>(&s.value).map_err(|_| {
        syn::Error::new(s.span, format!("`crate` must be a path, got `{}`", s.value))
    })?;
    Ok(WithSpan::new(path, s.span))
}

/// `scope = "field"` or `scope = ["a", "b"]`.
fn names(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Vec<WithSpan<String>>>> {
    let expr = value_expr(meta, key)?;
    let span = spanned(&expr);
    let wrong = || {
        syn::Error::new_spanned(
            &expr,
            "`scope` must be a field name or a list of field names: `scope = \"tenant\"` or `scope = [\"tenant\", \"year\"]`",
        )
    };
    let lit_str = |e: &Expr| match e {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(WithSpan::new(s.value(), s.span())),
        _ => None,
    };
    match &expr {
        Expr::Array(arr) => {
            let fields = arr
                .elems
                .iter()
                .map(|e| lit_str(e).ok_or_else(wrong))
                .collect::<syn::Result<Vec<_>>>()?;
            if fields.is_empty() {
                return Err(wrong());
            }
            Ok(WithSpan::new(fields, span))
        }
        e => Ok(WithSpan::new(vec![lit_str(e).ok_or_else(wrong)?], span)),
    }
}
