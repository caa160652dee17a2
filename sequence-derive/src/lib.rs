//! The `#[derive(SequentialId)]` and `#[derive(IdValue)]` macros of [`mongo-sequence`](https://docs.rs/mongo-sequence).
//!
//! Use it through the `mongo-sequence` crate, which documents every `#[seq(...)]` key.

mod ast;
mod attr;
mod check;
mod expand;
mod id_value;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `SequentialId`; see the `mongo-sequence` crate for the `#[seq(...)]` keys.
#[proc_macro_derive(SequentialId, attributes(seq))]
pub fn derive_sequential_id(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}

/// Derives `IdValue` for a one-field tuple struct over an ID type (`struct OrderNo(i64);`), so
/// that it can be the type of a `#[seq(id)]` field.
#[proc_macro_derive(IdValue, attributes(seq))]
pub fn derive_id_value(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    id_value::derive(&input).into()
}
