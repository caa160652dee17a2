//! Cross-field rules: the configuration rules of `sequence-rules` (the same the runtime
//! checks), each violation reported at the token it is about.

use proc_macro2::Span;
use sequence_rules::{check as rules, At, Checked, IdKind, Key};
use syn::Type;

use crate::ast::Model;
use crate::attr::Errors;

/// Checks every rule, reporting all violations; returns what a valid configuration means.
pub fn check(model: &Model, errors: &mut Errors) -> Option<Checked> {
    match rules(&model.spec()) {
        Ok(checked) => {
            primitive_id_type(model, &checked, errors);
            errors.is_empty().then_some(checked)
        }
        Err(violations) => {
            for v in violations {
                errors.at(span(model, v.at), v);
            }
            None
        }
    }
}

/// The rules about the ID field's type, for an ID field of a primitive integer type written
/// by name (`i64`, `Option<u32>`, `std::primitive::i32`): a plain compile error at the key.
/// Other types (newtypes, paths of one's own) are checked by the compiler through their
/// `IdValue::KIND` (see `expand::id_type_checks`), whatever they are named.
fn primitive_id_type(model: &Model, checked: &Checked, errors: &mut Errors) {
    let Some(kind) = primitive_kind(&model.id.ty) else {
        return;
    };
    let problems = checked.id_needs.problems(kind);
    let a = &model.attrs;
    let at = |span: Option<Span>| span.unwrap_or(model.id.ty_span);
    let places = [
        (problems.id_type, Some(model.id.ty_span)),
        (problems.width, a.span_of(Key::Width)),
        (problems.prefix, a.span_of(Key::Prefix)),
        (
            problems.text,
            checked.id_needs.text.and_then(|key| a.span_of(key)),
        ),
    ];
    for (problem, span) in places {
        if let Some(problem) = problem {
            errors.at(at(span), problem.as_str());
        }
    }
}

/// The kind of a primitive integer ID type written by name.
fn primitive_kind(ty: &Type) -> Option<IdKind> {
    let Type::Path(path) = ty else {
        return None;
    };
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let name = match segments.as_slice() {
        [name] if path.qself.is_none() => name,
        [root, primitive, name]
            if (root == "std" || root == "core") && primitive == "primitive" =>
        {
            name
        }
        _ => return None,
    };
    match name.as_str() {
        "i64" => Some(IdKind::I64),
        "i32" => Some(IdKind::I32),
        "u32" => Some(IdKind::U32),
        "u64" => Some(IdKind::U64),
        _ => None,
    }
}

/// The span of the tokens a violation is about.
fn span(model: &Model, at: At) -> Span {
    let scope = model.attrs.scope.as_ref();
    match at {
        At::Key(key) => model.attrs.span_of(key),
        At::ScopeField(i) => scope.and_then(|s| s.value.get(i)).map(|name| name.span),
        At::FilterField(i) => (model.attrs.filter.as_ref())
            .and_then(|f| f.value.get(i))
            .map(|entry| entry.value.span),
        At::IdType => Some(model.id.ty_span),
        // Options of the runtime alone: the derive has no token for them.
        At::Option(_) => None,
    }
    .unwrap_or_else(|| model.ident.span())
}
