//! Code generation: the `SequentialId` impl and the inherent methods users call.

use std::time::Duration;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use sequence_rules::encoding::{CheckDigit, Encoding};
use sequence_rules::{Batch, Checked, FilterValue, Layout, Stores, Strategy, Unique};
use syn::DeriveInput;

use crate::ast::{self, Model};
use crate::attr::{Errors, FilterEntry, StructAttrs, WithSpan};
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
            // The ID type the field declares, so that code using the IDs adds no errors of its
            // own; `i64` when no ID field was found.
            let id_ty = model.as_ref().map_or_else(
                || quote!(i64),
                |m| {
                    let ty = &m.id.ty;
                    quote!(#ty)
                },
            );
            let stub = stub(&input.ident, &id_ty, &krate);
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

/// A parsed value as an expression of the `SequenceConfig` setter of its key.
trait ConfigValue {
    fn tokens(&self, p: &TokenStream) -> TokenStream;
}

/// Values whose tokens are their literal.
macro_rules! literal_values {
    ($($ty:ty),*) => {$(
        impl ConfigValue for $ty {
            fn tokens(&self, _: &TokenStream) -> TokenStream {
                quote!(#self)
            }
        }
    )*};
}

literal_values!(String, u8, u32, i64, bool);

impl ConfigValue for Vec<WithSpan<String>> {
    fn tokens(&self, _: &TokenStream) -> TokenStream {
        let names = self.iter().map(|n| &n.value);
        quote!(&[#(#names),*])
    }
}

/// Values named by a variant of their type in the runtime's `__private` module.
macro_rules! variant_values {
    ($($ty:ident),*) => {$(
        impl ConfigValue for $ty {
            fn tokens(&self, p: &TokenStream) -> TokenStream {
                let variant = format_ident!("{}", self.variant());
                quote!(#p::$ty::#variant)
            }
        }
    )*};
}

variant_values!(Strategy, Layout, Stores, Unique, CheckDigit, Encoding);

impl ConfigValue for Batch {
    fn tokens(&self, p: &TokenStream) -> TokenStream {
        match self {
            Batch::Fixed(n) => quote!(#p::Batch::Fixed(#n)),
            Batch::Adaptive(a) => {
                let (min, max) = (a.min, a.max);
                quote!(#p::Batch::Adaptive(#p::AdaptiveBatch::new(#min, #max)))
            }
        }
    }
}

impl ConfigValue for Vec<FilterEntry> {
    fn tokens(&self, p: &TokenStream) -> TokenStream {
        let fields = self.iter().map(|entry| {
            let field = &entry.field.value;
            let value = match &entry.value.value {
                FilterValue::Text(t) => quote!(#p::FilterValue::Text(#t)),
                FilterValue::Integer(n) => quote!(#p::FilterValue::Integer(#n)),
                FilterValue::Bool(b) => quote!(#p::FilterValue::Bool(#b)),
                FilterValue::Name => quote!(#p::FilterValue::Name),
                FilterValue::IdField => quote!(#p::FilterValue::IdField),
                FilterValue::Period => quote!(#p::FilterValue::Period),
                FilterValue::PeriodNumber => quote!(#p::FilterValue::PeriodNumber),
                FilterValue::Scope(s) => quote!(#p::FilterValue::Scope(#s)),
            };
            quote!(#p::FilterField { field: #field, value: #value })
        });
        quote!(&[#(#fields),*])
    }
}

impl ConfigValue for Duration {
    fn tokens(&self, _: &TokenStream) -> TokenStream {
        let (secs, nanos) = (self.as_secs(), self.subsec_nanos());
        quote!(::core::time::Duration::new(#secs, #nanos))
    }
}

/// The `SequenceConfig` of the model: `SequenceConfig::new(name)`, a `const` setter (named as
/// the key) per key written, the range `digits` gives `start` and `max`, and where the
/// documents store the ID and the scope fields.
fn config(model: &Model, checked: &Checked, p: &TokenStream) -> TokenStream {
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
    } = &model.attrs;
    // `layout` first: it sets `counters` and `field` to its own, which those keys, when written,
    // replace.
    let setters = [
        setter("layout", layout, p),
        setter("batch", batch, p),
        setter("prefix", prefix, p),
        setter("tz", tz, p),
        setter("width", width, p),
        setter("digits", digits, p),
        setter("format", format, p),
        setter("check_digit", check_digit, p),
        setter("encoding", encoding, p),
        setter("alphabet", alphabet, p),
        setter("min_length", min_length, p),
        setter("start", start, p),
        setter("max", max, p),
        setter("strategy", strategy, p),
        setter("shards", shards, p),
        setter("retries", retries, p),
        setter("scope", scope, p),
        setter("counters", counters, p),
        setter("field", field, p),
        setter("stores", stores, p),
        setter("filter", filter, p),
        setter("unique", unique, p),
        setter("proxy", proxy, p),
        setter("gapless", gapless, p),
        setter("transaction_timeout", transaction_timeout, p),
    ];
    let name = &model.name;
    let mut config = quote!(#p::SequenceConfig::new(#name) #(#setters)*);
    if digits.is_some() {
        let (start, max) = (checked.start, checked.max);
        config = quote!(#config.start(#start).max(#max));
    }
    if model.id.stored != "_id" {
        let stored = &model.id.stored;
        config = quote!(#config.id_field(#stored));
    }
    if model.scope.iter().any(|f| f.stored != f.name) {
        let stored = model.scope.iter().map(|f| &f.stored);
        config = quote!(#config.scope_fields(&[#(#stored),*]));
    }
    config
}

/// `.key(value)`, the call of the `SequenceConfig` setter of a key written, or nothing.
fn setter<T: ConfigValue>(key: &str, value: &Option<WithSpan<T>>, p: &TokenStream) -> TokenStream {
    let Some(value) = value else {
        return TokenStream::new();
    };
    let (setter, value) = (format_ident!("{key}"), value.value.tokens(p));
    quote!(.#setter(#value))
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
            /// Returns an action that takes `.dry_run(true)` and `.session(..)`.
            pub fn sync_counters<'a>(
                collection: &#p::mongodb::Collection<Self>,
            ) -> #p::SyncCounters<'a> {
                <Self as #p::SequentialId>::sync_counters(collection)
            }
        }
    });
    quote! {
        #[automatically_derived]
        #[allow(dead_code)]
        impl #ident {
            /// Creates the indexes this model needs in `collection`'s database (the unique
            /// index of its ID field with its scope fields, a scoped proxy's, a layout's
            /// counters'), and reports each.
            pub fn ensure_indexes(
                collection: &#p::mongodb::Collection<Self>,
            ) -> #p::EnsureIndexes {
                <Self as #p::SequentialId>::ensure_indexes(collection)
            }

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
            /// for upserts to stay unique. Returns an action that takes `.session(..)` and the
            /// options of its writes (`.with_options(..)`, `.write_concern(..)`).
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

            /// The counter value (and period) of `id`, an ID of this model written as text
            /// (an integer ID as its digits), or `Error::InvalidId` saying what is wrong.
            pub fn parse_id(id: &str) -> #p::Result<#p::ParsedId> {
                <Self as #p::SequentialId>::parse_id(id)
            }

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
    let check_digits = n.check_digits;
    let text = match n.text {
        Some(key) => {
            let variant = format_ident!("{key:?}");
            quote!(::core::option::Option::Some(#p::Key::#variant))
        }
        None => quote!(::core::option::Option::None),
    };
    let needs = quote! {
        #p::IdNeeds {
            strategy: #p::Strategy::#strategy,
            digits: #digits,
            width_without_prefix: #width_without_prefix,
            literal_prefix: #literal_prefix,
            prefixed_digits: #prefixed,
            space: #space,
            check_digits: #check_digits,
            text: #text,
        }
    };
    let a = &model.attrs;
    let places = [
        ("id_type", Some(id.ty_span)),
        ("width", a.span_of(sequence_rules::Key::Width)),
        ("prefix", a.span_of(sequence_rules::Key::Prefix)),
        ("text", n.text.and_then(|key| a.span_of(key))),
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

/// Inherent methods with the right names, returning IDs of type `id_ty`, and no behaviour,
/// emitted beside compile errors so that calls to them do not add errors of their own.
fn stub(ident: &Ident, id_ty: &TokenStream, krate: &TokenStream) -> TokenStream {
    let p = quote!(#krate::__private);
    quote! {
        #[automatically_derived]
        #[allow(dead_code, unused_variables, clippy::all)]
        impl #ident {
            pub fn insert_with_id<C>(&mut self, collection: &C) -> #p::Stub<#id_ty> {
                #p::Stub::new()
            }
            pub fn insert_many_with_ids<C>(docs: &mut [Self], collection: &C) -> #p::Stub<::std::vec::Vec<#id_ty>> {
                #p::Stub::new()
            }
            pub fn next_id<C>(collection: &C) -> #p::Stub<#id_ty> {
                #p::Stub::new()
            }
            pub fn next_id_for<C>(&self, collection: &C) -> #p::Stub<#id_ty> {
                #p::Stub::new()
            }
            pub fn upsert_with_id<C, F>(&mut self, collection: &C, filter: F) -> #p::Stub<#id_ty> {
                #p::Stub::new()
            }
            pub fn sync_counters<C>(collection: &C) -> #p::Stub<#p::SyncReport> {
                #p::Stub::new()
            }
            pub fn parse_id(id: &str) -> #p::Result<#p::ParsedId> {
                ::core::panic!("the derive failed: its errors stop the build")
            }
            pub fn ensure_indexes<C>(collection: &C) -> #p::Stub<#p::IndexReport> {
                #p::Stub::new()
            }
        }
    }
}
