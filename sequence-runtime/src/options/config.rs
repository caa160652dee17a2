//! The compile-time configuration a `#[derive(SequentialId)]` model carries, declared from the
//! table of keys (`mongo_sequence_rules::for_each_key!`).

use mongo_sequence_rules as rules;

use super::forms::{const_setter, static_default, static_type, to_owned};
use super::sequence_options::SequenceOptions;

/// Declares [`SequenceConfig`] from the rows of the table.
macro_rules! declare_config {
    (
        name { $(#[doc = $ndoc:literal])* $nv:ident $nf:ident $nname:literal; }
        keys { $($(#[doc = $doc:literal])* $v:ident $f:ident $name:literal: $form:ident [$($ty:tt)*] = [$($default:tt)*] => $strategies:ident;)* }
        derive_only { $($(#[doc = $ddoc:literal])* $dv:ident $df:ident $dname:literal;)* }
    ) => {
        /// The configuration of a model's sequence, as written in its `#[seq(...)]` attributes:
        /// the keys of [`SequenceOptions`] under the same names, each at its default unless
        /// written, and where the documents store the ID and the scope fields.
        ///
        /// It is a constant ([`SequentialId::SEQUENCE`](crate::SequentialId::SEQUENCE)), built
        /// with `const` setters, so generic code can read it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct SequenceConfig {
            $(#[doc = $ndoc])*
            pub $nf: &'static str,
            $($(#[doc = $doc])* pub $f: static_type!($form, [$($ty)*]),)*
            /// The name the documents store the ID under (default `_id`): where inserts that
            /// meet stored IDs, and `sync_counters`, look for them.
            pub id_field: &'static str,
            /// The names the documents store the `scope` fields under, in `scope` order (empty:
            /// the `scope` names themselves).
            pub scope_fields: &'static [&'static str],
        }

        impl SequenceConfig {
            /// A configuration named `name` with every other key at its default.
            pub const fn new($nf: &'static str) -> Self {
                SequenceConfig {
                    $nf,
                    $($f: static_default!($form, [$($default)*]),)*
                    id_field: "_id",
                    scope_fields: &[],
                }
            }

            $(const_setter!($(#[doc = $doc])* $f: $form [$($ty)*]);)*

            /// The runtime options this configuration describes.
            pub fn options(&self) -> SequenceOptions {
                let mut options = SequenceOptions::builder(self.$nf).build();
                $(options.$f = to_owned!($form, self.$f);)*
                options
            }
        }
    };
}

rules::for_each_key!(declare_config);

impl SequenceConfig {
    /// Sets the name the documents store the ID under.
    pub const fn id_field(mut self, field: &'static str) -> Self {
        self.id_field = field;
        self
    }

    /// Sets the names the documents store the `scope` fields under, in `scope` order.
    pub const fn scope_fields(mut self, fields: &'static [&'static str]) -> Self {
        self.scope_fields = fields;
        self
    }

    /// The names the documents store the `scope` fields under, with the `scope` names they
    /// stand for.
    pub(crate) fn stored_scope(&self) -> impl Iterator<Item = (&'static str, &'static str)> {
        let stored = if self.scope_fields.len() == self.scope.len() {
            self.scope_fields
        } else {
            self.scope
        };
        self.scope.iter().copied().zip(stored.iter().copied())
    }

    /// The batch of a sequence whose values [`options`](Self::options) makes a plain counter
    /// keyed by its name alone (no period, scope, padding or shard) and cached in the process:
    /// derived models take such values straight from the process's cache of the counter.
    pub(crate) fn cached_batch(&self) -> Option<rules::Batch> {
        let plain = self.strategy == rules::Strategy::Counter
            && self.scope.is_empty()
            && self.prefix.is_none()
            && self.width.is_none()
            && !self.gapless;
        (plain && self.batch.is_cached()).then_some(self.batch)
    }
}
