//! Cross-field rules: the configuration rules of `sequence-rules` (the same the runtime
//! checks), each violation reported at the token it is about.

use proc_macro2::Span;
use sequence_rules::{check as rules, At, Checked};

use crate::ast::Model;
use crate::attr::Errors;

/// Checks every rule, reporting all violations; returns what a valid configuration means.
pub fn check(model: &Model, errors: &mut Errors) -> Option<Checked> {
    match rules(&model.spec()) {
        Ok(checked) => Some(checked),
        Err(violations) => {
            for v in violations {
                errors.at(span(model, v.at), v);
            }
            None
        }
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
