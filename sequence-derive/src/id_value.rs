//! `#[derive(IdValue)]`: a one-field tuple struct stands for the ID type it wraps.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

use crate::attr;

/// Expands the derive, or its error.
pub fn derive(input: &DeriveInput) -> TokenStream {
    match expand(input) {
        Ok(tokens) => tokens,
        Err(e) => e.to_compile_error(),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let ident = &input.ident;
    let refused = |span: proc_macro2::Span| {
        syn::Error::new(
            span,
            format!(
                "`IdValue` can be derived for a struct with exactly one unnamed field of an ID \
                 type, such as `struct {ident}(i64);`"
            ),
        )
    };
    let inner = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Unnamed(fields) if fields.unnamed.len() == 1 => &fields.unnamed[0].ty,
            Fields::Unnamed(fields) => return Err(refused(fields.span())),
            Fields::Named(fields) => return Err(refused(fields.span())),
            Fields::Unit => return Err(refused(ident.span())),
        },
        Data::Enum(e) => return Err(refused(e.enum_token.span())),
        Data::Union(u) => return Err(refused(u.union_token.span())),
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "`IdValue` cannot be derived for generic structs",
        ));
    }
    let krate = attr::crate_path(&input.attrs)?;
    let p = quote!(#krate::__private);
    let name = ident.to_string();
    Ok(quote! {
        #[automatically_derived]
        impl #p::IdValue for #ident {
            const TYPE_NAME: &'static str = #name;
            const KIND: #p::IdKind = <#inner as #p::IdValue>::KIND;
            const STORED_AS_TEXT: bool = <#inner as #p::IdValue>::STORED_AS_TEXT;
            const SERIALIZER_NEEDED: ::core::option::Option<&'static str> =
                <#inner as #p::IdValue>::SERIALIZER_NEEDED;

            fn from_counter(value: i64) -> #p::Result<Self> {
                <#inner as #p::IdValue>::from_counter(value).map(Self)
            }

            fn from_generated(value: #p::Generated) -> #p::Result<Self> {
                <#inner as #p::IdValue>::from_generated(value).map(Self)
            }

            fn from_stored(value: #p::mongodb::bson::Bson) -> #p::Result<Self> {
                <#inner as #p::IdValue>::from_stored(value).map(Self)
            }

            fn render(value: i64, rendering: &#p::Rendering) -> #p::Result<Self> {
                <#inner as #p::IdValue>::render(value, rendering).map(Self)
            }
        }
    })
}
