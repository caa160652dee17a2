//! Code generation: the `SequentialId` impl and the inherent methods users call.

use proc_macro2::{Ident, TokenStream};
use quote::quote;
use syn::DeriveInput;

use crate::ast::{self, Model};
use crate::attr::{BatchAttr, Errors};
use crate::check;

/// Default bounds of `batch = "auto"`.
const AUTO_MIN: u64 = 10;
const AUTO_MAX: u64 = 10_000;

/// Expands the derive, or its errors plus a stub that keeps further errors away.
pub fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let model = ast::model(input, &mut errors);
    if let Some(model) = &model {
        check::check(model, &mut errors);
    }
    match (model, errors.finish()) {
        (Some(model), Ok(())) => generate(&model),
        (model, result) => {
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

/// `UserAccount` → `user_account`.
pub fn snake_case(ident: &str) -> String {
    let chars: Vec<char> = ident.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1);
            let boundary = match prev {
                Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                Some(p) if p.is_uppercase() => next.is_some_and(|n| n.is_lowercase()),
                _ => false,
            };
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn generate(model: &Model) -> TokenStream {
    let a = &model.attrs;
    let ident = &model.ident;
    let krate = a.krate.as_ref().map_or_else(default_crate, |k| {
        let p = &k.value;
        quote!(#p)
    });
    let p = quote!(#krate::__private);
    let name = a
        .name
        .as_ref()
        .map_or_else(|| snake_case(&ident.to_string()), |n| n.value.clone());

    let mut config = quote!(#p::SequenceConfig::new(#name));
    if let Some(c) = &a.counters {
        let c = &c.value;
        config = quote!(#config.counters(#c));
    }
    match a.batch.as_ref().map(|b| &b.value) {
        Some(BatchAttr::Fixed(n)) => config = quote!(#config.batch(#n)),
        Some(BatchAttr::Auto) => {
            let min = a.batch_min.as_ref().map_or(AUTO_MIN, |v| v.value);
            let max = a.batch_max.as_ref().map_or(AUTO_MAX.max(min), |v| v.value);
            config = quote!(#config.batch_auto(#min, #max));
        }
        None => {}
    }
    // With `digits`, the defaults of `start` and `max` are the first and last value of that
    // many digits.
    let digit_range = a.digits.as_ref().map(|d| {
        let d = d.value as u32;
        (10_i64.pow(d - 1), 10_i64.pow(d) - 1)
    });
    if let Some(s) = a
        .start
        .as_ref()
        .map(|s| s.value)
        .or(digit_range.map(|r| r.0))
    {
        config = quote!(#config.start(#s));
    }
    if let Some(m) = a.max.as_ref().map(|m| m.value).or(digit_range.map(|r| r.1)) {
        config = quote!(#config.max(#m));
    }
    if let Some(v) = &a.prefix {
        let v = &v.value;
        config = quote!(#config.prefix(#v));
    }
    if let Some(v) = &a.tz {
        let v = &v.value;
        config = quote!(#config.tz(#v));
    }
    if let Some(v) = &a.width {
        let v = v.value as u8;
        config = quote!(#config.width(#v));
    }
    if let Some(v) = &a.digits {
        let v = v.value as u8;
        config = quote!(#config.digits(#v));
    }
    if let Some(v) = &a.strategy {
        let variant = match v.value.as_str() {
            "sharded" => quote!(Sharded),
            "random" => quote!(Random),
            "uuid" => quote!(Uuid),
            "uuid_v7" => quote!(UuidV7),
            "object_id" => quote!(ObjectId),
            _ => quote!(Counter),
        };
        config = quote!(#config.strategy(#p::Strategy::#variant));
    }
    if let Some(v) = &a.shards {
        let v = v.value as u32;
        config = quote!(#config.shards(#v));
    }
    if let Some(v) = &a.retries {
        let v = v.value as u32;
        config = quote!(#config.retries(#v));
    }
    if !model.scope.is_empty() {
        let names = model.scope.iter().map(|f| &f.name);
        config = quote!(#config.scope(&[#(#names),*]));
    }
    if let Some(v) = &a.layout {
        if v.value == "mongoose" {
            config = quote!(#config.layout(#p::LayoutConfig::Mongoose));
        }
    }
    if let Some(v) = &a.gapless {
        let v = v.value;
        config = quote!(#config.gapless(#v));
    }
    if let Some(v) = &a.timeout_ms {
        let v = v.value;
        config = quote!(#config.timeout_ms(#v));
    }

    let id = &model.id;
    let member = &id.member;
    let id_ty = &id.ty;
    let assign = if id.optional {
        quote!(::core::option::Option::Some(id))
    } else {
        quote!(id)
    };
    let field_doc = match member {
        syn::Member::Named(n) => n.to_string(),
        syn::Member::Unnamed(i) => i.index.to_string(),
    };
    let strategy = a.strategy.as_ref().map_or("counter", |s| s.value.as_str());
    let takes = match strategy {
        "random" => "Draws a random ID (again on a collision with an existing `_id`)".to_owned(),
        "uuid" | "uuid_v7" => "Makes a new UUID".to_owned(),
        "object_id" => "Makes a new ObjectId".to_owned(),
        _ => format!("Takes the next ID of the `{name}` sequence"),
    };
    let insert_doc = format!(
        " {takes}, stores it in `{field_doc}`, inserts this document into `collection` and returns the ID."
    );

    // serde stores a `uuid::Uuid` as generic binary: require a type it stores as a BSON UUID,
    // unless the field has a serializer of its own.
    let uuid_check = (id.kind == ast::IdKind::Uuid && !id.serde_with).then(|| {
        let call = quote::quote_spanned!(id.ty_span=> stored_as_bson_uuid::<#id_ty>());
        quote! {
            #[allow(dead_code)]
            const _: () = {
                fn stored_as_bson_uuid<T: #p::BsonUuid>() {}
                fn check() {
                    #call;
                }
            };
        }
    });

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
        #uuid_check

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

        #[automatically_derived]
        #[allow(dead_code)]
        impl #ident {
            #[doc = #insert_doc]
            pub async fn insert_with_id(
                &mut self,
                collection: &#p::mongodb::Collection<Self>,
            ) -> #p::Result<#id_ty> {
                <Self as #p::SequentialId>::insert_with_id(self, collection).await
            }

            /// Like `insert_with_id`, with the insert in `session`.
            pub async fn insert_with_id_in_session(
                &mut self,
                collection: &#p::mongodb::Collection<Self>,
                session: &mut #p::mongodb::ClientSession,
            ) -> #p::Result<#id_ty> {
                <Self as #p::SequentialId>::insert_with_id_in_session(self, collection, session).await
            }

            /// Gives every document of `docs` an ID (with a counter: one contiguous range, in
            /// one round trip) and inserts them with one `insert_many`; returns the IDs in order.
            pub async fn insert_many_with_ids(
                docs: &mut [Self],
                collection: &#p::mongodb::Collection<Self>,
            ) -> #p::Result<::std::vec::Vec<#id_ty>> {
                <Self as #p::SequentialId>::insert_many_with_ids(docs, collection).await
            }

            /// Takes the next ID of this model's sequence without inserting anything.
            pub async fn next_id(
                collection: &#p::mongodb::Collection<Self>,
            ) -> #p::Result<#id_ty> {
                <Self as #p::SequentialId>::next_id(collection).await
            }

            /// Takes the next ID for this document (from the counter of its `scope` values, if
            /// the model has a scope) without inserting anything.
            pub async fn next_id_for(
                &self,
                collection: &#p::mongodb::Collection<Self>,
            ) -> #p::Result<#id_ty> {
                <Self as #p::SequentialId>::next_id_for(self, collection).await
            }

            /// The sequence of this model for `collection`, for admin operations
            /// (`current`, `set_next`, `reset`, `release`, `stats`).
            pub fn sequence(collection: &#p::mongodb::Collection<Self>) -> #p::Sequence {
                <Self as #p::SequentialId>::sequence(collection)
            }
        }
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
            pub async fn insert_with_id<C>(&mut self, collection: &C) -> #p::Result<i64> {
                #p::Result::Ok(0)
            }
            pub async fn insert_with_id_in_session<C, S>(&mut self, collection: &C, session: &mut S) -> #p::Result<i64> {
                #p::Result::Ok(0)
            }
            pub async fn insert_many_with_ids<C>(docs: &mut [Self], collection: &C) -> #p::Result<::std::vec::Vec<i64>> {
                #p::Result::Ok(::std::vec::Vec::new())
            }
            pub async fn next_id<C>(collection: &C) -> #p::Result<i64> {
                #p::Result::Ok(0)
            }
            pub async fn next_id_for<C>(&self, collection: &C) -> #p::Result<i64> {
                #p::Result::Ok(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::snake_case;

    #[test]
    fn snake_case_names() {
        assert_eq!(snake_case("User"), "user");
        assert_eq!(snake_case("UserAccount"), "user_account");
        assert_eq!(snake_case("HTTPRequest"), "http_request");
        assert_eq!(snake_case("Invoice2024Line"), "invoice2024_line");
    }
}
