//! Code generation: the `SequentialId` impl and the inherent methods users call.

use mongo_sequence_rules::{BatchConfig, Checked, Strategy};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use syn::DeriveInput;

use crate::ast::{self, Model};
use crate::attr::Errors;
use crate::check;

/// Expands the derive, or its errors plus a stub that keeps further errors away.
pub fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let model = ast::model(input, &mut errors);
    // The rules read the parsed configuration: after a key that did not parse they would
    // report its default's consequences as mistakes of their own.
    let checked = model
        .as_ref()
        .filter(|_| errors.is_empty())
        .and_then(|m| check::check(m, &mut errors));
    match (model, checked, errors.finish()) {
        (Some(model), Some(checked), Ok(())) => generate(&model, &checked),
        (model, _, result) => {
            let err = result.err().unwrap_or_else(|| {
                syn::Error::new(
                    input.ident.span(),
                    "cannot derive `SequentialId` for this item",
                )
            });
            let krate = model
                .as_ref()
                .and_then(|m| m.attrs.krate.as_ref())
                .map_or_else(default_crate, |k| {
                    let p = &k.value;
                    quote!(#p)
                });
            let stub = stub(&input.ident, &krate);
            let errors = err.to_compile_error();
            quote! { #errors #stub }
        }
    }
}

fn default_crate() -> TokenStream {
    quote!(::mongo_sequence)
}

/// The generated code of a valid model, as the rules `checked` it: the checks of the ID's type,
/// the `SequentialId` implementation with its configuration, and the inherent methods.
fn generate(model: &Model, checked: &Checked) -> TokenStream {
    let krate = model.attrs.krate.as_ref().map_or_else(default_crate, |k| {
        let p = &k.value;
        quote!(#p)
    });
    let p = quote!(#krate::__private);
    let id_checks = id_type_checks(model, checked, &p);
    let config = config(model, checked, &p);
    let trait_impl = trait_impl(model, &config, &p);
    let methods = inherent_methods(model, &p);
    quote! {
        #id_checks
        #trait_impl
        #methods
    }
}

/// The `SequenceConfig` of the model: `SequenceConfig::new(name)` and a setter per key given.
fn config(model: &Model, checked: &Checked, p: &TokenStream) -> TokenStream {
    let name = &model.name;
    let mut config = quote!(#p::SequenceConfig::new(#name));
    let mut set = |method: &str, value: TokenStream| {
        let method = format_ident!("{method}");
        config = quote!(#config.#method(#value));
    };
    let spec = model.spec();
    if let Some(c) = spec.counters {
        set("counters", quote!(#c));
    }
    match (spec.batch, checked.batch) {
        (None, _) => {}
        (Some(_), BatchConfig::Fixed(n)) => set("batch", quote!(#n)),
        (Some(_), BatchConfig::Adaptive { min, max }) => set("adaptive_batch", quote!(#min, #max)),
    }
    // With `digits`, `start` and `max` default to the first and last value of that many digits.
    let (start, max) = match spec.digits {
        Some(_) => (Some(checked.start), Some(checked.max)),
        None => (spec.start, spec.max),
    };
    if let Some(v) = start {
        set("start", quote!(#v));
    }
    if let Some(v) = max {
        set("max", quote!(#v));
    }
    if let Some(v) = spec.prefix {
        set("prefix", quote!(#v));
    }
    if let Some(v) = spec.tz {
        set("tz", quote!(#v));
    }
    if let Some(v) = spec.width {
        let v = v as u8;
        set("width", quote!(#v));
    }
    if let Some(v) = spec.digits {
        let v = v as u8;
        set("digits", quote!(#v));
    }
    if let Some(v) = spec.strategy {
        let variant = format_ident!("{}", v.variant());
        set("strategy", quote!(#p::Strategy::#variant));
    }
    if let Some(v) = spec.shards {
        let v = v as u32;
        set("shards", quote!(#v));
    }
    if let Some(v) = spec.retries {
        let v = v as u32;
        set("retries", quote!(#v));
    }
    if !model.scope.is_empty() {
        let names = model.scope.iter().map(|f| &f.name);
        set("scope", quote!(&[#(#names),*]));
    }
    if let Some(v) = spec.layout {
        let variant = format_ident!("{}", v.variant());
        set("layout", quote!(#p::LayoutConfig::#variant));
    }
    if let Some(v) = spec.counter_field {
        set("field", quote!(#v));
    }
    if let Some(v) = spec.stores {
        let variant = format_ident!("{}", v.variant());
        set("stores", quote!(#p::Stores::#variant));
    }
    if model.id.stored != "_id" {
        let stored = &model.id.stored;
        set("id_field", quote!(#stored));
    }
    if model.scope.iter().any(|f| f.stored != f.name) {
        let stored = model.scope.iter().map(|f| &f.stored);
        set("scope_fields", quote!(&[#(#stored),*]));
    }
    if let Some(v) = spec.gapless {
        set("gapless", quote!(#v));
    }
    if let Some(v) = spec.timeout_ms {
        set(
            "transaction_timeout",
            quote!(::core::time::Duration::from_millis(#v)),
        );
    }

    config
}

/// `impl SequentialId`: the ID type, the configuration, and the accessors of the fields.
fn trait_impl(model: &Model, config: &TokenStream, p: &TokenStream) -> TokenStream {
    let ident = &model.ident;
    let id = &model.id;
    let member = &id.member;
    let id_ty = &id.ty;
    let assign = if id.optional {
        quote!(::core::option::Option::Some(id))
    } else {
        quote!(id)
    };
    let scope_fn = (!model.scope.is_empty()).then(|| {
        let names = model.scope.iter().map(|f| &f.name);
        let members = model.scope.iter().map(|f| &f.member);
        quote! {
            fn scope_values(
                &self,
            ) -> #p::Result<::std::vec::Vec<(&'static str, #p::mongodb::bson::Bson)>> {
                ::core::result::Result::Ok(::std::vec![
                    #( (#names, #p::scope_value(&self.#members)?), )*
                ])
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl #p::SequentialId for #ident {
            type Id = #id_ty;

            const SEQUENCE: #p::SequenceConfig = #config;

            #[inline]
            fn set_id(&mut self, id: Self::Id) {
                self.#member = #assign;
            }

            #scope_fn
        }
    }
}

/// The first line of the generated `insert_with_id`'s documentation, for the model's strategy.
fn insert_doc(model: &Model) -> String {
    let name = &model.name;
    let field = match &model.id.member {
        syn::Member::Named(n) => n.to_string(),
        syn::Member::Unnamed(i) => i.index.to_string(),
    };
    let takes = match model
        .attrs
        .strategy
        .as_ref()
        .map(|s| s.value)
        .unwrap_or_default()
    {
        Strategy::Random => {
            "Draws a random ID (again on a collision with an existing `_id`)".to_owned()
        }
        Strategy::Uuid | Strategy::UuidV7 => "Makes a new UUID".to_owned(),
        Strategy::ObjectId => "Makes a new ObjectId".to_owned(),
        _ => format!("Takes the next ID of the `{name}` sequence"),
    };
    format!(
        " {takes}, stores it in `{field}`, inserts this document into `collection` and returns the ID."
    )
}

/// The inherent methods users call without importing the trait, each returning the trait's
/// action.
fn inherent_methods(model: &Model, p: &TokenStream) -> TokenStream {
    let ident = &model.ident;
    let insert_doc = insert_doc(model);
    let strategy = model
        .attrs
        .strategy
        .as_ref()
        .map(|s| s.value)
        .unwrap_or_default();
    // `sync_counters` for the strategies with counters.
    let sync_fn = strategy.uses_counters().then(|| {
        quote! {
            /// Moves every counter of this model up to the highest ID stored for it in
            /// `collection` (after an import, a restore, or another writer), never down.
            pub async fn sync_counters(
                collection: &#p::mongodb::Collection<Self>,
            ) -> #p::Result<#p::SyncReport> {
                <Self as #p::SequentialId>::sync_counters(collection).await
            }
        }
    });
    quote! {
        #[automatically_derived]
        #[allow(dead_code)]
        impl #ident {
            #[doc = #insert_doc]
            ///
            /// Returns an action: `.await` it, or first give it `.session(&mut session)` or the
            /// insert's options (`.with_options(..)`, `.write_concern(..)`).
            pub fn insert_with_id<'a>(
                &'a mut self,
                collection: &'a #p::mongodb::Collection<Self>,
            ) -> #p::InsertWithId<'a, Self> {
                <Self as #p::SequentialId>::insert_with_id(self, collection)
            }

            /// Updates the document `filter` matches with this document's fields, keeping its
            /// stored ID, or inserts this document with a new ID; returns the stored ID. A
            /// number is taken only for an insert. Needs a unique index on the filter's fields
            /// for upserts to stay unique. Returns an action that takes `.session(..)` and
            /// `.write_concern(..)`.
            pub fn upsert_with_id<'a>(
                &'a mut self,
                collection: &'a #p::mongodb::Collection<Self>,
                filter: #p::mongodb::bson::Document,
            ) -> #p::UpsertWithId<'a, Self> {
                <Self as #p::SequentialId>::upsert_with_id(self, collection, filter)
            }

            /// Gives every document of `docs` an ID (with a counter: one contiguous range, in
            /// one round trip) and inserts them with one `insert_many`; returns the IDs in
            /// order. Returns an action that takes `.session(..)` and the insert's options.
            pub fn insert_many_with_ids<'a>(
                docs: &'a mut [Self],
                collection: &'a #p::mongodb::Collection<Self>,
            ) -> #p::InsertManyWithIds<'a, Self> {
                <Self as #p::SequentialId>::insert_many_with_ids(docs, collection)
            }

            /// Takes the next ID of this model's sequence without inserting anything. Returns
            /// an action that takes `.session(..)`.
            pub fn next_id(
                collection: &#p::mongodb::Collection<Self>,
            ) -> #p::NextId<'_, Self> {
                <Self as #p::SequentialId>::next_id(collection)
            }

            /// Takes the next ID for this document (from the counter of its `scope` values, if
            /// the model has a scope) without inserting anything. Returns an action that takes
            /// `.session(..)`.
            pub fn next_id_for<'a>(
                &'a self,
                collection: &'a #p::mongodb::Collection<Self>,
            ) -> #p::NextId<'a, Self> {
                <Self as #p::SequentialId>::next_id_for(self, collection)
            }

            #sync_fn

            /// The sequence of this model for `collection`, for admin operations
            /// (`current`, `set_next`, `reset`, `release`, `stats`).
            pub fn sequence(collection: &#p::mongodb::Collection<Self>) -> #p::Sequence {
                <Self as #p::SequentialId>::sequence(collection)
            }
        }
    }
}

/// The rules about the ID field's type, checked by the compiler with the type's
/// `IdValue::KIND` (whatever the type is named): one constant per place a rule points at, each
/// spanned there, so that a broken rule is a compile error at that token.
fn id_type_checks(model: &Model, checked: &Checked, p: &TokenStream) -> TokenStream {
    let id = &model.id;
    let n = &checked.id_needs;
    let strategy = format_ident!("{}", n.strategy.variant());
    let opt_u8 = |v: Option<u8>| match v {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    };
    let digits = opt_u8(n.digits);
    let prefixed = match n.prefixed_digits {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    };
    let space = match n.space {
        Some((lo, hi)) => quote!(::core::option::Option::Some((#lo, #hi))),
        None => quote!(::core::option::Option::None),
    };
    let (width_without_prefix, literal_prefix) = (n.width_without_prefix, n.literal_prefix);
    let needs = quote! {
        #p::IdNeeds {
            strategy: #p::Strategy::#strategy,
            digits: #digits,
            width_without_prefix: #width_without_prefix,
            literal_prefix: #literal_prefix,
            prefixed_digits: #prefixed,
            space: #space,
        }
    };
    let a = &model.attrs;
    let places = [
        ("id_type", Some(id.ty_span)),
        ("width", a.span_of(mongo_sequence_rules::Key::Width)),
        ("prefix", a.span_of(mongo_sequence_rules::Key::Prefix)),
    ];
    // Each rule runs in a `const fn` generic over the model, which reads the ID type as
    // `M::Id`: a type that does not implement `IdValue` is then one error (at the field), not
    // one per rule. The call is spanned at the place the rule is about, where the error points.
    let ident = &model.ident;
    let check = |span: proc_macro2::Span, body: TokenStream| {
        quote::quote_spanned! {span=>
            const _: () = {
                const fn rule<M: #p::SequentialId>() {
                    #body
                }
                rule::<#ident>()
            };
        }
    };
    let rules = places.into_iter().map(|(place, span)| {
        let place = format_ident!("{place}");
        let body = quote! {
            let problems = #needs.problems(<M::Id as #p::IdValue>::KIND);
            if let ::core::option::Option::Some(problem) = problems.#place {
                ::core::panic!("{}", problem.as_str())
            }
        };
        check(span.unwrap_or(id.ty_span), body)
    });
    let serializer = (!id.serde_with).then(|| {
        let body = quote! {
            if let ::core::option::Option::Some(needed) =
                <M::Id as #p::IdValue>::SERIALIZER_NEEDED
            {
                ::core::panic!("{}", needed)
            }
        };
        check(id.ty_span, body)
    });
    quote! {
        #(#rules)*
        #serializer
    }
}

/// Inherent methods with the right names and no behaviour, emitted beside compile errors so
/// that calls to them do not add errors of their own.
fn stub(ident: &Ident, krate: &TokenStream) -> TokenStream {
    let p = quote!(#krate::__private);
    quote! {
        #[automatically_derived]
        #[allow(dead_code, unused_variables, clippy::all)]
        impl #ident {
            pub fn insert_with_id<C>(&mut self, collection: &C) -> #p::Stub<i64> {
                #p::Stub::new(0)
            }
            pub fn insert_many_with_ids<C>(docs: &mut [Self], collection: &C) -> #p::Stub<::std::vec::Vec<i64>> {
                #p::Stub::new(::std::vec::Vec::new())
            }
            pub fn next_id<C>(collection: &C) -> #p::Stub<i64> {
                #p::Stub::new(0)
            }
            pub fn next_id_for<C>(&self, collection: &C) -> #p::Stub<i64> {
                #p::Stub::new(0)
            }
            pub fn upsert_with_id<C, F>(&mut self, collection: &C, filter: F) -> #p::Stub<i64> {
                #p::Stub::new(0)
            }
            pub async fn sync_counters<C>(collection: &C) -> #p::Result<#p::SyncReport> {
                #p::Result::Ok(::core::default::Default::default())
            }
        }
    }
}
