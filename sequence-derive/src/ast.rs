//! The checked model of the input: the struct, its ID field and its configuration.

use std::collections::HashMap;

use proc_macro2::{Ident, Span};
use sequence_rules::{defaults, suggest, FilterField, IdField as RuleIdField, Spec};
use serde_derive_internals::{ast as serde_ast, Derive};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, GenericArgument, Member, PathArguments, Type};

use crate::attr::{self, Errors, StructAttrs, WithSpan};

/// The field that receives the ID.
pub struct IdField {
    pub member: Member,
    /// The field's name.
    pub name: String,
    /// The ID type (inside `Option` if the field is optional).
    pub ty: Type,
    pub optional: bool,
    /// The field's type tokens, for errors about the type.
    pub ty_span: Span,
    /// Whether serde serializes the field with a function of its own (`with`,
    /// `serialize_with`).
    pub serde_with: bool,
    /// Whether the field is stored as `_id` (named so, or renamed by serde).
    pub is_doc_id: bool,
    /// The name the field is stored under (serde's `rename`, `rename_all`).
    pub stored: String,
}

/// A field named by `scope`.
pub struct ScopeField {
    pub member: Member,
    /// The name as written in `scope`, which is also the counter key's field name.
    pub name: String,
    /// The name the field is stored under.
    pub stored: String,
}

/// The whole checked input.
pub struct Model {
    pub ident: Ident,
    pub attrs: StructAttrs,
    pub id: IdField,
    pub scope: Vec<ScopeField>,
    /// The counter name: `name`, or the type name in snake case.
    pub name: String,
}

impl Model {
    /// The configuration as the rules see it.
    pub fn spec(&self) -> Spec<'_> {
        fn text(value: &Option<WithSpan<String>>) -> Option<&str> {
            value.as_ref().map(|v| v.value.as_str())
        }
        fn copied<T: Copy>(value: &Option<WithSpan<T>>) -> Option<T> {
            value.as_ref().map(|v| v.value)
        }
        let StructAttrs {
            name: _,
            batch,
            prefix,
            tz,
            width,
            digits,
            format,
            check_digit,
            encoding,
            alphabet,
            min_length,
            start,
            max,
            strategy,
            shards,
            retries,
            scope,
            counters,
            layout,
            field,
            stores,
            filter,
            unique,
            proxy,
            gapless,
            transaction_timeout,
            krate: _,
        } = &self.attrs;
        Spec {
            name: &self.name,
            batch: copied(batch),
            prefix: text(prefix),
            tz: text(tz),
            width: copied(width),
            digits: copied(digits),
            format: text(format),
            check_digit: copied(check_digit),
            encoding: copied(encoding),
            alphabet: text(alphabet),
            min_length: copied(min_length),
            start: copied(start),
            max: copied(max),
            strategy: copied(strategy),
            shards: copied(shards),
            retries: copied(retries),
            scope: scope
                .as_ref()
                .map(|v| v.value.iter().map(|n| n.value.as_str()).collect())
                .unwrap_or_default(),
            counters: text(counters),
            layout: copied(layout),
            field: text(field),
            stores: copied(stores),
            filter: filter
                .as_ref()
                .map(|f| {
                    f.value
                        .iter()
                        .map(|e| FilterField {
                            field: e.field.value.as_str(),
                            value: e.value.value.as_str(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            unique: copied(unique),
            proxy: text(proxy),
            gapless: copied(gapless),
            transaction_timeout: copied(transaction_timeout),
            prefetch_at: None,
            id: Some(RuleIdField {
                name: &self.id.name,
                is_document_id: self.id.is_doc_id,
            }),
        }
    }
}

/// Builds the model; reports every problem to `errors`. `None` when no model can be built.
pub fn model(input: &DeriveInput, errors: &mut Errors) -> Option<Model> {
    let attrs = attr::struct_attrs(&input.attrs, errors);
    let fields = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => named,
            Fields::Unnamed(_) => {
                errors.at(
                    input.ident.span(),
                    "`SequentialId` needs a struct with named fields, not a tuple struct",
                );
                return None;
            }
            Fields::Unit => {
                errors.at(
                    input.ident.span(),
                    "`SequentialId` needs a struct with named fields, not a unit struct",
                );
                return None;
            }
        },
        Data::Enum(e) => {
            errors.at(
                e.enum_token.span(),
                "`SequentialId` can only be derived for structs with named fields, not enums",
            );
            return None;
        }
        Data::Union(u) => {
            errors.at(
                u.union_token.span(),
                "`SequentialId` can only be derived for structs with named fields, not unions",
            );
            return None;
        }
    };
    if !input.generics.params.is_empty() {
        errors.at(
            input.generics.span(),
            "`SequentialId` cannot be derived for generic structs",
        );
        return None;
    }

    let mut marked = Vec::new();
    let mut by_name = None;
    for field in &fields.named {
        let ident = field.ident.clone().expect("named field");
        if let Some(span) = attr::field_is_id(&field.attrs, errors) {
            marked.push((field, span));
        }
        if ident == "_id" || attr::serde_renamed_to_id(&field.attrs) {
            by_name.get_or_insert(field);
        }
    }
    let id_field = match (marked.as_slice(), by_name) {
        ([(field, _)], _) => *field,
        ([], Some(field)) => field,
        ([], None) => {
            errors.at(
                input.ident.span(),
                "no ID field: mark one field with `#[seq(id)]`, or name it `_id`, or give it `#[serde(rename = \"_id\")]`",
            );
            return None;
        }
        ([_, (_, second), ..], _) => {
            errors.at(
                *second,
                "two ID fields: only one field may carry `#[seq(id)]`",
            );
            return None;
        }
    };
    let stored = stored_names(input);
    let stored_name = |ident: &str| {
        stored
            .get(ident)
            .cloned()
            .unwrap_or_else(|| ident.to_owned())
    };
    let mut id = id_field_of(id_field);
    id.stored = stored_name(&id.name);
    id.is_doc_id |= id.stored == "_id";

    let mut scope = Vec::new();
    let field_names: Vec<String> = fields
        .named
        .iter()
        .filter_map(|f| f.ident.as_ref().map(ToString::to_string))
        .collect();
    if let Some(names) = &attrs.scope {
        for written in &names.value {
            let name = written.value.clone();
            match fields
                .named
                .iter()
                .find(|f| f.ident.as_ref().is_some_and(|i| i == &name))
            {
                Some(f) => scope.push(ScopeField {
                    member: Member::Named(f.ident.clone().expect("named")),
                    stored: stored_name(&name),
                    name,
                }),
                None => errors.at(
                    written.span,
                    format!(
                        "`scope` names `{name}`, which is not a field of `{}`{}",
                        input.ident,
                        suggest::did_you_mean(&name, field_names.iter().map(String::as_str))
                    ),
                ),
            }
        }
    }

    let name = attrs.name.as_ref().map_or_else(
        || defaults::counter_name(&input.ident.to_string()),
        |n| n.value.clone(),
    );
    Some(Model {
        ident: input.ident.clone(),
        attrs,
        id,
        scope,
        name,
    })
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        _ => None,
    }
}

fn id_field_of(field: &syn::Field) -> IdField {
    let member = Member::Named(field.ident.clone().expect("named"));
    let ty_span = field.ty.span();
    let is_doc_id =
        field.ident.as_ref().is_some_and(|i| i == "_id") || attr::serde_renamed_to_id(&field.attrs);
    // `Option<T>` holds its ID once inserted; any other type is the ID type itself, whose
    // `IdValue` implementation the compiler checks.
    let inner = match last_segment(&field.ty) {
        Some(seg) if seg.ident == "Option" => match &seg.arguments {
            PathArguments::AngleBracketed(args) if args.args.len() == 1 => match &args.args[0] {
                GenericArgument::Type(t) => Some(t.clone()),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    };
    let optional = inner.is_some();
    let inner = inner.unwrap_or_else(|| field.ty.clone());
    IdField {
        member,
        name: field.ident.as_ref().expect("named").to_string(),
        ty: inner,
        optional,
        ty_span,
        serde_with: attr::serde_has_with(&field.attrs),
        is_doc_id,
        stored: String::new(),
    }
}

/// The names serde stores the fields under (`rename`, `rename_all`), by Rust name. Serde's own
/// derive reports mistakes in its attributes, so none are reported here.
fn stored_names(input: &DeriveInput) -> HashMap<String, String> {
    let cx = serde_derive_internals::Ctxt::new();
    let names = serde_derive_internals::ast::Container::from_ast(&cx, input, Derive::Serialize)
        .map(|container| match container.data {
            serde_ast::Data::Struct(_, fields) => fields
                .iter()
                .filter_map(|f| match &f.member {
                    Member::Named(ident) => Some((
                        ident.to_string(),
                        f.attrs.name().serialize_name().to_owned(),
                    )),
                    Member::Unnamed(_) => None,
                })
                .collect(),
            serde_ast::Data::Enum(_) => HashMap::new(),
        })
        .unwrap_or_default();
    let _ = cx.check();
    names
}
