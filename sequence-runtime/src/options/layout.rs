//! The shape of the counter documents, as users choose it. How the stores address and read
//! documents of a layout is in `store/layout.rs`.

use mongo_sequence_rules::defaults;

pub use mongo_sequence_rules::Stores;

/// How a counter document is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum Keys {
    /// By `_id` (the key's value).
    #[default]
    Id,
    /// By mongoose-sequence's `{ id, reference_value }`.
    Mongoose,
}

/// The shape of the counter documents: the counter field's name and what it stores.
///
/// The default is `{ _id: <name>, seq: <last issued> }`. Counters written by existing code keep
/// working when the layout says what that code wrote:
///
/// ```
/// # use mongo_sequence_runtime::{options::CounterLayout, options::Stores};
/// // { _id: "invoice", COUNT: 1042 } where 1042 is the next number to hand out
/// let layout = CounterLayout::new().field("COUNT").stores(Stores::NextFree);
/// assert_eq!((layout.field.as_str(), layout.stores), ("COUNT", Stores::NextFree));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CounterLayout {
    /// The counter field's name (default `seq`).
    pub field: String,
    /// What the counter field holds (default the last value issued).
    pub stores: Stores,
    pub(crate) keys: Keys,
}

impl Default for CounterLayout {
    fn default() -> Self {
        CounterLayout {
            field: defaults::COUNTER_FIELD.to_owned(),
            stores: Stores::LastIssued,
            keys: Keys::Id,
        }
    }
}

impl CounterLayout {
    /// The default layout: field `seq`, last issued value.
    pub fn new() -> Self {
        Self::default()
    }

    /// mongoose-sequence's layout: `{ id: <name>, reference_value: <scope or null>, seq: <last
    /// issued> }`, found by `{ id, reference_value }` (with the unique index on those two fields
    /// that mongoose-sequence declares, created when missing), so that a Rust service and a
    /// Node service using mongoose-sequence share one counter.
    ///
    /// `reference_value` is `null` for an unscoped counter and `{ <field>: <value>, … }` (fields
    /// sorted by name, values as stored in the documents) for a scoped one. This layout has no
    /// periods: a sequence with date tokens in its `prefix` cannot use it.
    pub fn mongoose() -> Self {
        CounterLayout {
            keys: Keys::Mongoose,
            ..Self::default()
        }
    }

    /// Whether this is mongoose-sequence's layout.
    pub fn is_mongoose(&self) -> bool {
        self.keys == Keys::Mongoose
    }

    /// Sets the counter field's name.
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = field.into();
        self
    }

    /// Sets what the counter field stores.
    pub fn stores(mut self, stores: Stores) -> Self {
        self.stores = stores;
        self
    }
}
