//! The `#[derive(SequentialId)]` macro of [`mongo-sequence`](https://docs.rs/mongo-sequence).
//!
//! Use it through the `mongo-sequence` crate, which documents every `#[seq(...)]` key.

mod ast;
mod attr;
mod check;
mod expand;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `SequentialId`; see the `mongo-sequence` crate for the `#[seq(...)]` keys.
#[proc_macro_derive(SequentialId, attributes(seq))]
pub fn derive_sequential_id(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}
