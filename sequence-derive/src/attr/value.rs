//! The values of `#[seq(...)]` keys: each parsed from the tokens after `key =` into a typed
//! value with the span it came from, or an error at those tokens that says what the key takes.

use std::time::Duration;

use proc_macro2::Span;
use sequence_rules::encoding::{CheckDigit, Encoding};
use sequence_rules::limits::MAX_DIGITS;
use sequence_rules::{Batch, FilterValue, Key, Layout, Stores, Strategy, Unique};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprRange, ExprUnary, Lit, RangeLimits, UnOp};

/// A value and the span of the tokens it came from.
#[derive(Clone, Debug)]
pub struct WithSpan<T> {
    pub value: T,
    pub span: Span,
}

impl<T> WithSpan<T> {
    pub(crate) fn new(value: T, span: Span) -> Self {
        WithSpan { value, span }
    }
}

/// Consumes whatever value follows a key (`= expr` or `(...)`), so parsing can go on.
pub(crate) fn skip_value(meta: &ParseNestedMeta<'_>) {
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
    let mut expr: Expr = meta.value()?.parse()?;
    // A value a `macro_rules!` passed on (`$name:literal`) arrives in an invisible group.
    while let Expr::Group(group) = expr {
        expr = *group.expr;
    }
    Ok(expr)
}

pub(crate) fn string(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<String>> {
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
pub(crate) trait Value: Sized {
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

impl Value for CheckDigit {
    fn parse(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Self>> {
        one_of(
            meta,
            key,
            "check digit",
            &CheckDigit::NAMES,
            CheckDigit::from_name,
        )
    }
}

impl Value for Encoding {
    fn parse(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Self>> {
        let names = Encoding::ALL.map(Encoding::name);
        one_of(meta, key, "`encoding` value", &names, Encoding::from_name)
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
        let s = string(meta, key)?;
        if let Some(now) = Layout::renamed(&s.value) {
            return Err(syn::Error::new(s.span, now));
        }
        let names = Layout::ALL.map(Layout::name);
        Layout::from_name(&s.value)
            .map(|layout| WithSpan::new(layout, s.span))
            .ok_or_else(|| {
                syn::Error::new(
                    s.span,
                    format!(
                        "unknown layout \"{}\", expected one of: {}",
                        s.value,
                        expected_one_of(&names)
                    ),
                )
            })
    }
}

/// One field of `filter(...)`: its name and what it holds, each with its span.
#[derive(Clone, Debug)]
pub struct FilterEntry {
    pub field: WithSpan<String>,
    pub value: WithSpan<FilterValue>,
}

/// `filter(field = value, …)`, or the same as text: `filter = "field = value, …"`.
pub(crate) fn filter(
    meta: &ParseNestedMeta<'_>,
    key: Key,
) -> syn::Result<WithSpan<Vec<FilterEntry>>> {
    let span = meta.path.span();
    if meta.input.peek(syn::Token![=]) {
        let text = string(meta, key)?;
        let fields = sequence_rules::filter::parse(&text.value)
            .map_err(|e| syn::Error::new(text.span, e))?;
        let entries = fields
            .into_iter()
            .map(|f| FilterEntry {
                field: WithSpan::new(f.field, text.span),
                value: WithSpan::new(f.value, text.span),
            })
            .collect();
        return Ok(WithSpan::new(entries, text.span));
    }
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(
            "`filter` needs its fields: `filter(prefix = period as number, app = \"billing\")`",
        ));
    }
    let empty = {
        let fork = meta.input.fork();
        let content;
        syn::parenthesized!(content in fork);
        content.is_empty()
    };
    if empty {
        skip_value(meta);
        return Err(syn::Error::new(
            span,
            "`filter` needs at least one field: `filter(prefix = period as number)`",
        ));
    }
    let mut entries = Vec::new();
    meta.parse_nested_meta(|inner| {
        let Some(name) = inner.path.get_ident() else {
            return Err(
                inner.error("a field of `filter` is named by an identifier, such as `prefix`")
            );
        };
        let field = WithSpan::new(name.to_string(), name.span());
        if !inner.input.peek(syn::Token![=]) {
            return Err(inner.error(format!(
                "the field `{name}` of `filter` needs a value: `{name} = name`"
            )));
        }
        let expr: Expr = inner.value()?.parse()?;
        let value = filter_value(&expr)?;
        entries.push(FilterEntry { field, value });
        Ok(())
    })?;
    Ok(WithSpan::new(entries, span))
}

/// What a field of `filter(...)` holds, from the expression written.
fn filter_value(expr: &Expr) -> syn::Result<WithSpan<FilterValue>> {
    let span = spanned(expr);
    let value = match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => FilterValue::Text(s.value()),
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => FilterValue::Bool(b.value),
        Expr::Path(p) if p.path.is_ident("name") => FilterValue::Name,
        Expr::Path(p) if p.path.is_ident("id_field") => FilterValue::IdField,
        Expr::Path(p) if p.path.is_ident("period") => FilterValue::Period,
        Expr::Cast(cast) if matches!(&*cast.expr, Expr::Path(p) if p.path.is_ident("period")) => {
            match &*cast.ty {
                syn::Type::Path(t) if t.path.is_ident("number") => FilterValue::PeriodNumber,
                other => {
                    return Err(syn::Error::new_spanned(
                        other,
                        "a period is read `as number`: `period as number`",
                    ))
                }
            }
        }
        Expr::Call(call) if matches!(&*call.func, Expr::Path(p) if p.path.is_ident("scope")) => {
            match call.args.iter().collect::<Vec<_>>().as_slice() {
                [Expr::Path(p)] if p.path.get_ident().is_some() => {
                    FilterValue::Scope(p.path.get_ident().expect("an identifier").to_string())
                }
                _ => {
                    return Err(syn::Error::new_spanned(
                        &call.args,
                        "`scope(...)` takes the name of one scope field: `scope(tenant)`",
                    ))
                }
            }
        }
        e => match integer(e) {
            Some(Ok(n)) => match i64::try_from(n) {
                Ok(n) => FilterValue::Integer(n),
                Err(_) => {
                    return Err(syn::Error::new_spanned(
                        e,
                        "a number in `filter` must fit in `i64`",
                    ))
                }
            },
            _ => {
                return Err(syn::Error::new_spanned(
                    e,
                    "a field of `filter` holds a text (`\"Ticket\"`), an integer, `true`, \
                     `false`, `name`, `id_field`, `period`, `period as number` or \
                     `scope(field)`",
                ))
            }
        },
    };
    Ok(WithSpan::new(value, span))
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

pub(crate) fn path(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<syn::Path>> {
    let s = string(meta, key)?;
    let path = syn::parse_str::<syn::Path>(&s.value).map_err(|_| {
        syn::Error::new(s.span, format!("`crate` must be a path, got `{}`", s.value))
    })?;
    Ok(WithSpan::new(path, s.span))
}

/// `scope = "field"` or `scope = ["a", "b"]`.
pub(crate) fn names(
    meta: &ParseNestedMeta<'_>,
    key: Key,
) -> syn::Result<WithSpan<Vec<WithSpan<String>>>> {
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

/// `` `a`, `b`, `c` ``, for the list of what a key takes.
pub(crate) fn expected_one_of(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
