//! `layout = "..."`: which convention the counter documents follow, so that this crate and
//! another program's library share one counter live.

use crate::defaults;

/// `layout = "..."`: how counter documents are found and where they are, by default. The
/// counter field's name and what it holds are the keys `field` and `stores`; a convention of
/// one's own is the key `filter` (with the default layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Layout {
    /// By `_id`: `{ _id: <name>, seq: <last issued> }` in `counters` (with a period or a scope,
    /// `_id` is `{ seq, period, scope }`).
    #[default]
    Default,
    /// mongoose-sequence's: by `{ id: <name>, reference_value: <scope or null> }` in
    /// `counters`, with the unique index on those two fields that mongoose-sequence declares.
    /// `reference_value` is `{ <field>: <value>, … }` (fields sorted by name, values as
    /// stored) for a scoped counter. No periods.
    MongooseSequence,
    /// @typegoose/auto-increment's `AutoIncrementID`: by `{ field: <ID field>, modelName:
    /// <name> }` in `identitycounters`, the last issued value in `count` (a 64-bit integer),
    /// with its unique index `{ field: 1, modelName: 1 }`. One counter per model and field:
    /// no periods, scopes or shards.
    Typegoose,
    /// mongoose-auto-increment's and its fork mongoose-plugin-autoinc's: by `{ model: <name>,
    /// field: <ID field> }` and the fork's `groupingField` (`""`, or the value of the one
    /// `scope` field) in `identitycounters`, the last issued value in `count`, with the fork's
    /// unique index `{ field: 1, groupingField: 1, model: 1 }`. No periods or shards.
    MongooseAutoIncrement,
}

impl Layout {
    /// Every layout, in the order messages list them.
    pub const ALL: [Layout; 4] = [
        Layout::Default,
        Layout::MongooseSequence,
        Layout::Typegoose,
        Layout::MongooseAutoIncrement,
    ];

    /// The name, as written in `#[seq(layout = "...")]`.
    pub const fn name(self) -> &'static str {
        match self {
            Layout::Default => "default",
            Layout::MongooseSequence => "mongoose_sequence",
            Layout::Typegoose => "typegoose",
            Layout::MongooseAutoIncrement => "mongoose_auto_increment",
        }
    }

    /// The name of the Rust variant, for generated code.
    pub const fn variant(self) -> &'static str {
        match self {
            Layout::Default => "Default",
            Layout::MongooseSequence => "MongooseSequence",
            Layout::Typegoose => "Typegoose",
            Layout::MongooseAutoIncrement => "MongooseAutoIncrement",
        }
    }

    /// The layout named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.name() == name)
    }

    /// What a layout name of an earlier version, no longer accepted, is written as now.
    ///
    /// ```
    /// use sequence_rules::Layout;
    /// assert!(Layout::renamed("mongoose").unwrap().contains("`layout = \"mongoose_sequence\"`"));
    /// assert_eq!(Layout::renamed("typegoose"), None);
    /// ```
    pub fn renamed(written: &str) -> Option<&'static str> {
        match written {
            "mongoose" => Some(
                "`layout = \"mongoose\"` is now `layout = \"mongoose_sequence\"` (the layout of \
                 mongoose-sequence; mongoose-auto-increment's is `layout = \
                 \"mongoose_auto_increment\"`, typegoose's `layout = \"typegoose\"`)",
            ),
            _ => None,
        }
    }

    /// The collection of the counters when `counters` is not given.
    pub const fn counters(self) -> &'static str {
        match self {
            Layout::Default | Layout::MongooseSequence => defaults::COUNTERS,
            Layout::Typegoose | Layout::MongooseAutoIncrement => "identitycounters",
        }
    }

    /// The counter field when `field` is not given.
    pub const fn field(self) -> &'static str {
        match self {
            Layout::Default | Layout::MongooseSequence => defaults::COUNTER_FIELD,
            Layout::Typegoose | Layout::MongooseAutoIncrement => "count",
        }
    }

    /// The library whose convention the layout is, for messages.
    pub const fn library(self) -> &'static str {
        match self {
            Layout::Default => "this crate",
            Layout::MongooseSequence => "mongoose-sequence",
            Layout::Typegoose => "@typegoose/auto-increment",
            Layout::MongooseAutoIncrement => "mongoose-auto-increment",
        }
    }

    /// Whether the layout has a place for the period of a counter.
    pub const fn has_periods(self) -> bool {
        matches!(self, Layout::Default)
    }

    /// How many `scope` fields the layout has a place for (`None`: any number).
    pub const fn scope_fields(self) -> Option<usize> {
        match self {
            Layout::Default | Layout::MongooseSequence => None,
            Layout::Typegoose => Some(0),
            Layout::MongooseAutoIncrement => Some(1),
        }
    }

    /// Whether the layout has a place for the shards of `strategy = "ranges"`.
    pub const fn has_shards(self) -> bool {
        matches!(self, Layout::Default | Layout::MongooseSequence)
    }
}
