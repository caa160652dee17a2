//! Parsing of `#[seq(...)]` attributes into typed, spanned values. Every error is collected;
//! none stops the parse of the other keys. An unknown key, or an unknown value of a key that
//! takes one of a set (`strategy`, `layout`, `batch`), is an error at its token.

use mongo_sequence_rules::{Batch, Key, LayoutConfig, Stores, Strategy};
use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, ExprUnary, Lit, LitStr, UnOp};

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

/// Declares the struct-level keys: for each [`Key`], the field of [`StructAttrs`] that holds
/// its value, the value's type and its parser. This is the one list of the derive's keys.
macro_rules! struct_keys {
    ($($key:ident => $field:ident: $ty:ty = $parse:ident,)*) => {
        /// The struct-level keys, as written, with their typed values.
        #[derive(Default)]
        pub struct StructAttrs {
            $(pub $field: Option<WithSpan<$ty>>,)*
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
                    $(Key::$key => set_once(&mut self.$field, key, $parse(meta, key)?, errors),)*
                }
                Ok(())
            }

            /// Where `key` was written, if it was.
            pub fn span_of(&self, key: Key) -> Option<Span> {
                match key {
                    $(Key::$key => self.$field.as_ref().map(|v| v.span),)*
                }
            }
        }
    };
}

struct_keys! {
    Name => name: String = string,
    Batch => batch: Batch = batch,
    BatchMin => batch_min: u64 = unsigned,
    BatchMax => batch_max: u64 = unsigned,
    Prefix => prefix: String = string,
    Tz => tz: String = string,
    Width => width: u64 = unsigned,
    Digits => digits: u64 = unsigned,
    Start => start: i64 = signed,
    Max => max: i64 = signed,
    Strategy => strategy: Strategy = strategy,
    Shards => shards: u64 = unsigned,
    Retries => retries: u64 = unsigned,
    Scope => scope: Vec<LitStr> = scope,
    Counters => counters: String = string,
    Layout => layout: LayoutConfig = layout,
    Field => field: String = string,
    Stores => stores: Stores = stores,
    Gapless => gapless: bool = flag,
    TimeoutMs => timeout_ms: u64 = unsigned,
    Crate => krate: syn::Path = path,
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
                        Some(w) => format!(
                            "unknown `seq` key `{w}`, expected one of: {}",
                            Key::expected()
                        ),
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

fn unsigned(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<u64>> {
    let expr = value_expr(meta, key)?;
    let msg = format!("`{key}` must be a positive integer");
    match integer(&expr) {
        Some(Ok(v)) if v >= 0 && v <= i128::from(u64::MAX) => {
            Ok(WithSpan::new(v as u64, spanned(&expr)))
        }
        _ => Err(syn::Error::new_spanned(&expr, msg)),
    }
}

fn signed(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<i64>> {
    let expr = value_expr(meta, key)?;
    match integer(&expr) {
        Some(Ok(v)) if i64::try_from(v).is_ok() => Ok(WithSpan::new(v as i64, spanned(&expr))),
        _ => Err(syn::Error::new_spanned(
            &expr,
            format!("`{key}` must be an integer that fits in `i64`"),
        )),
    }
}

fn batch(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Batch>> {
    let expr = value_expr(meta, key)?;
    let span = spanned(&expr);
    if let Expr::Lit(ExprLit {
        lit: Lit::Str(s), ..
    }) = &expr
    {
        return match s.value().as_str() {
            "auto" => Ok(WithSpan::new(Batch::Auto, span)),
            other => Err(syn::Error::new(
                span,
                format!(
                    "unknown `batch` value \"{other}\", expected an integer of at least 1 or \"auto\""
                ),
            )),
        };
    }
    match integer(&expr) {
        Some(Ok(v)) if v >= 0 && v <= i128::from(u64::MAX) => {
            Ok(WithSpan::new(Batch::Fixed(v as u64), span))
        }
        _ => Err(syn::Error::new_spanned(
            &expr,
            "`batch` must be an integer of at least 1 or \"auto\"",
        )),
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

fn strategy(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Strategy>> {
    let s = string(meta, key)?;
    Strategy::parse(&s.value)
        .map(|strategy| WithSpan::new(strategy, s.span))
        .map_err(|message| syn::Error::new(s.span, message))
}

fn stores(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Stores>> {
    let names = Stores::ALL.map(Stores::name);
    one_of(meta, key, "`stores` value", &names, Stores::from_name)
}

fn layout(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<LayoutConfig>> {
    let names = LayoutConfig::ALL.map(LayoutConfig::name);
    one_of(meta, key, "layout", &names, LayoutConfig::from_name)
}

fn path(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<syn::Path>> {
    let s = string(meta, key)?;
    let path = syn::parse_str::<syn::Path>(&s.value).map_err(|_| {
        syn::Error::new(s.span, format!("`crate` must be a path, got `{}`", s.value))
    })?;
    Ok(WithSpan::new(path, s.span))
}

fn flag(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<bool>> {
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

fn scope(meta: &ParseNestedMeta<'_>, key: Key) -> syn::Result<WithSpan<Vec<LitStr>>> {
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
            Ok(WithSpan::new(fields, span))
        }
        e => Ok(WithSpan::new(vec![lit_str(e).ok_or_else(wrong)?], span)),
    }
}
