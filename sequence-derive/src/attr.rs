//! Parsing of `#[seq(...)]` attributes into raw, spanned values. Every error is collected; none
//! stops the parse of the other keys.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, ExprUnary, Lit, LitStr, UnOp};

/// Keys accepted in a struct-level `#[seq(...)]`, in the order error messages list them.
pub const STRUCT_KEYS: &[&str] = &[
    "name",
    "batch",
    "batch_min",
    "batch_max",
    "prefix",
    "tz",
    "width",
    "digits",
    "start",
    "max",
    "strategy",
    "shards",
    "retries",
    "scope",
    "counters",
    "layout",
    "gapless",
    "timeout_ms",
    "crate",
];

/// Keys accepted in a field-level `#[seq(...)]`.
pub const FIELD_KEYS: &[&str] = &["id"];

/// A value and the span of the tokens it came from.
#[derive(Clone, Debug)]
pub struct Sp<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Sp<T> {
    fn new(value: T, span: Span) -> Self {
        Sp { value, span }
    }
}

/// `batch = N` or `batch = "auto"`.
#[derive(Clone, Debug)]
pub enum BatchAttr {
    Fixed(u64),
    Auto,
}

/// The struct-level keys, as written.
#[derive(Default)]
pub struct StructAttrs {
    pub name: Option<Sp<String>>,
    pub batch: Option<Sp<BatchAttr>>,
    pub batch_min: Option<Sp<u64>>,
    pub batch_max: Option<Sp<u64>>,
    pub prefix: Option<Sp<String>>,
    pub tz: Option<Sp<String>>,
    pub width: Option<Sp<u64>>,
    pub digits: Option<Sp<u64>>,
    pub start: Option<Sp<i64>>,
    pub max: Option<Sp<i64>>,
    pub strategy: Option<Sp<String>>,
    pub shards: Option<Sp<u64>>,
    pub retries: Option<Sp<u64>>,
    pub scope: Option<Sp<Vec<LitStr>>>,
    pub counters: Option<Sp<String>>,
    pub layout: Option<Sp<String>>,
    pub gapless: Option<Sp<bool>>,
    pub timeout_ms: Option<Sp<u64>>,
    pub krate: Option<Sp<syn::Path>>,
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
fn set_once<T>(slot: &mut Option<Sp<T>>, key: &str, value: Sp<T>, errors: &mut Errors) {
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
            let Some(ident) = meta.path.get_ident().map(ToString::to_string) else {
                return Err(meta.error(format!(
                    "unknown `seq` key, expected one of: {}",
                    expected_one_of(STRUCT_KEYS)
                )));
            };
            if let Err(e) = struct_key(&ident, &meta, &mut out, errors) {
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

fn struct_key(
    key: &str,
    meta: &ParseNestedMeta<'_>,
    out: &mut StructAttrs,
    errors: &mut Errors,
) -> syn::Result<()> {
    let span = meta.path.span();
    match key {
        "name" => set_once(&mut out.name, key, string(meta)?, errors),
        "prefix" => set_once(&mut out.prefix, key, string(meta)?, errors),
        "tz" => set_once(&mut out.tz, key, string(meta)?, errors),
        "strategy" => set_once(&mut out.strategy, key, string(meta)?, errors),
        "counters" => set_once(&mut out.counters, key, string(meta)?, errors),
        "layout" => set_once(&mut out.layout, key, string(meta)?, errors),
        "batch" => set_once(&mut out.batch, key, batch(meta)?, errors),
        "batch_min" => set_once(&mut out.batch_min, key, unsigned(meta, key)?, errors),
        "batch_max" => set_once(&mut out.batch_max, key, unsigned(meta, key)?, errors),
        "width" => set_once(&mut out.width, key, unsigned(meta, key)?, errors),
        "digits" => set_once(&mut out.digits, key, unsigned(meta, key)?, errors),
        "shards" => set_once(&mut out.shards, key, unsigned(meta, key)?, errors),
        "retries" => set_once(&mut out.retries, key, unsigned(meta, key)?, errors),
        "start" => set_once(&mut out.start, key, signed(meta, key)?, errors),
        "max" => set_once(&mut out.max, key, signed(meta, key)?, errors),
        "scope" => set_once(&mut out.scope, key, scope(meta)?, errors),
        "gapless" => set_once(&mut out.gapless, key, flag(meta, key)?, errors),
        "timeout_ms" => set_once(&mut out.timeout_ms, key, unsigned(meta, key)?, errors),
        "crate" => {
            let s = string(meta)?;
            let path = syn::parse_str::<syn::Path>(&s.value).map_err(|_| {
                syn::Error::new(s.span, format!("`crate` must be a path, got `{}`", s.value))
            })?;
            set_once(&mut out.krate, key, Sp::new(path, s.span), errors)
        }
        _ => {
            return Err(syn::Error::new(
                span,
                format!(
                    "unknown `seq` key `{key}`, expected one of: {}",
                    expected_one_of(STRUCT_KEYS)
                ),
            ))
        }
    }
    Ok(())
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

fn value_expr(meta: &ParseNestedMeta<'_>) -> syn::Result<Expr> {
    let key = meta
        .path
        .get_ident()
        .map_or_else(String::new, ToString::to_string);
    if !meta.input.peek(syn::Token![=]) {
        return Err(meta.error(format!("`{key}` needs a value: `{key} = ...`")));
    }
    meta.value()?.parse()
}

fn string(meta: &ParseNestedMeta<'_>) -> syn::Result<Sp<String>> {
    let key = meta
        .path
        .get_ident()
        .map_or_else(String::new, ToString::to_string);
    match value_expr(meta)? {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(Sp::new(s.value(), s.span())),
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

fn unsigned(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<Sp<u64>> {
    let expr = value_expr(meta)?;
    let msg = format!("`{key}` must be a positive integer");
    match integer(&expr) {
        Some(Ok(v)) if v >= 0 && v <= i128::from(u64::MAX) => Ok(Sp::new(v as u64, spanned(&expr))),
        _ => Err(syn::Error::new_spanned(&expr, msg)),
    }
}

fn signed(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<Sp<i64>> {
    let expr = value_expr(meta)?;
    match integer(&expr) {
        Some(Ok(v)) if i64::try_from(v).is_ok() => Ok(Sp::new(v as i64, spanned(&expr))),
        _ => Err(syn::Error::new_spanned(
            &expr,
            format!("`{key}` must be an integer that fits in `i64`"),
        )),
    }
}

fn batch(meta: &ParseNestedMeta<'_>) -> syn::Result<Sp<BatchAttr>> {
    let expr = value_expr(meta)?;
    let span = spanned(&expr);
    let wrong = || {
        syn::Error::new_spanned(
            &expr,
            "`batch` must be an integer of at least 1 or \"auto\"",
        )
    };
    if let Expr::Lit(ExprLit {
        lit: Lit::Str(s), ..
    }) = &expr
    {
        return match s.value().as_str() {
            "auto" => Ok(Sp::new(BatchAttr::Auto, span)),
            other => Err(syn::Error::new(
                span,
                format!("unknown `batch` value \"{other}\", expected an integer of at least 1 or \"auto\""),
            )),
        };
    }
    match integer(&expr) {
        Some(Ok(v)) if v >= 1 && v <= i128::from(u64::MAX) => {
            Ok(Sp::new(BatchAttr::Fixed(v as u64), span))
        }
        Some(Ok(_)) => Err(syn::Error::new_spanned(&expr, "`batch` must be at least 1")),
        _ => Err(wrong()),
    }
}

fn flag(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<Sp<bool>> {
    let span = meta.path.span();
    if !meta.input.peek(syn::Token![=]) {
        return Ok(Sp::new(true, span));
    }
    match meta.value()?.parse::<Expr>()? {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => Ok(Sp::new(b.value, b.span())),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` must be `true` or `false`"),
        )),
    }
}

fn scope(meta: &ParseNestedMeta<'_>) -> syn::Result<Sp<Vec<LitStr>>> {
    let expr = value_expr(meta)?;
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
        }) => Some(s.clone()),
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
            Ok(Sp::new(fields, span))
        }
        e => Ok(Sp::new(vec![lit_str(e).ok_or_else(wrong)?], span)),
    }
}

impl StructAttrs {
    /// Where a key was written, if it was.
    pub fn span_of(&self, key: &str) -> Option<Span> {
        fn s<T>(v: &Option<Sp<T>>) -> Option<Span> {
            v.as_ref().map(|v| v.span)
        }
        match key {
            "name" => s(&self.name),
            "batch" => s(&self.batch),
            "batch_min" => s(&self.batch_min),
            "batch_max" => s(&self.batch_max),
            "prefix" => s(&self.prefix),
            "tz" => s(&self.tz),
            "width" => s(&self.width),
            "digits" => s(&self.digits),
            "start" => s(&self.start),
            "max" => s(&self.max),
            "strategy" => s(&self.strategy),
            "shards" => s(&self.shards),
            "retries" => s(&self.retries),
            "scope" => s(&self.scope),
            "counters" => s(&self.counters),
            "layout" => s(&self.layout),
            "gapless" => s(&self.gapless),
            "timeout_ms" => s(&self.timeout_ms),
            "crate" => s(&self.krate),
            _ => None,
        }
    }
}
