//! The values of the keys that choose a behaviour: `strategy`, `layout` and `stores`.

use std::fmt;

/// `strategy = "..."`: how IDs are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Strategy {
    /// One counter document, optionally with cached batches.
    #[default]
    Counter,
    /// Several counter documents of one sequence, each owning a range (slice) of the ID space.
    Ranges,
    /// Random IDs, uniqueness enforced by the database.
    Random,
    /// UUID version 4.
    Uuid,
    /// UUID version 7.
    UuidV7,
    /// ObjectId.
    ObjectId,
}

impl Strategy {
    /// Every strategy, in the order messages list them.
    pub const ALL: [Strategy; 6] = [
        Strategy::Counter,
        Strategy::Ranges,
        Strategy::Random,
        Strategy::Uuid,
        Strategy::UuidV7,
        Strategy::ObjectId,
    ];

    /// The name, as written in `#[seq(strategy = "...")]`.
    pub const fn name(self) -> &'static str {
        match self {
            Strategy::Counter => "counter",
            Strategy::Ranges => "ranges",
            Strategy::Random => "random",
            Strategy::Uuid => "uuid",
            Strategy::UuidV7 => "uuid_v7",
            Strategy::ObjectId => "object_id",
        }
    }

    /// The name of the Rust variant (`Counter`, `UuidV7`…), for generated code.
    pub const fn variant(self) -> &'static str {
        match self {
            Strategy::Counter => "Counter",
            Strategy::Ranges => "Ranges",
            Strategy::Random => "Random",
            Strategy::Uuid => "Uuid",
            Strategy::UuidV7 => "UuidV7",
            Strategy::ObjectId => "ObjectId",
        }
    }

    /// The strategy named `name`, as written in `#[seq(strategy = "...")]`.
    ///
    /// ```
    /// use sequence_rules::Strategy;
    /// assert_eq!(Strategy::from_name("uuid_v7"), Some(Strategy::UuidV7));
    /// assert_eq!(Strategy::from_name("serial"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The strategy named `name`, or a message that says what to write instead: the new name
    /// of a renamed strategy, or the valid names.
    ///
    /// ```
    /// use sequence_rules::Strategy;
    /// assert_eq!(Strategy::parse("ranges"), Ok(Strategy::Ranges));
    /// assert!(Strategy::parse("sharded").unwrap_err().contains("write `strategy = \"ranges\"`"));
    /// ```
    pub fn parse(name: &str) -> Result<Self, String> {
        if let Some(strategy) = Self::from_name(name) {
            return Ok(strategy);
        }
        if name == "sharded" {
            return Err(
                "strategy \"sharded\" is now called \"ranges\" (several counter documents \
                        of one sequence, each owning a range of IDs; it has nothing to do with \
                        MongoDB sharding): write `strategy = \"ranges\"`"
                    .to_owned(),
            );
        }
        let names: Vec<String> = Self::ALL.iter().map(|s| format!("`{s}`")).collect();
        Err(format!(
            "unknown strategy \"{name}\", expected one of: {}",
            names.join(", ")
        ))
    }

    /// Whether IDs come from counter documents (`counter`, `ranges`).
    pub const fn uses_counters(self) -> bool {
        matches!(self, Strategy::Counter | Strategy::Ranges)
    }

    /// Whether IDs are numbers (`counter`, `ranges`, `random`).
    pub const fn is_numeric(self) -> bool {
        matches!(
            self,
            Strategy::Counter | Strategy::Ranges | Strategy::Random
        )
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A strategy name that [`Strategy::parse`] refused, with what to write instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownStrategy(String);

impl fmt::Display for UnknownStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnknownStrategy {}

impl std::str::FromStr for Strategy {
    type Err = UnknownStrategy;

    /// Parses a name as written in `#[seq(strategy = "...")]` (see [`Strategy::parse`]).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Strategy::parse(name).map_err(UnknownStrategy)
    }
}

/// `stores = "..."`: what the counter field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Stores {
    /// The last value issued (`{ seq: 41 }` means 41 was issued and 42 comes next), as in the
    /// MongoDB documentation's counters collection and mongoose-sequence.
    #[default]
    LastIssued,
    /// The next free value (`{ COUNT: 42 }` means 42 comes next), as in counters that are read
    /// before they are incremented.
    NextFree,
}

impl Stores {
    /// Every value, in the order messages list them.
    pub const ALL: [Stores; 2] = [Stores::LastIssued, Stores::NextFree];

    /// The name, as written in `#[seq(stores = "...")]`.
    pub const fn name(self) -> &'static str {
        match self {
            Stores::LastIssued => "last_issued",
            Stores::NextFree => "next_free",
        }
    }

    /// The name of the Rust variant, for generated code.
    pub const fn variant(self) -> &'static str {
        match self {
            Stores::LastIssued => "LastIssued",
            Stores::NextFree => "NextFree",
        }
    }

    /// The value named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The stored value minus the last value issued.
    pub const fn offset(self) -> i64 {
        match self {
            Stores::LastIssued => 0,
            Stores::NextFree => 1,
        }
    }
}

/// `unique = "..."`: what keeps two documents from holding one ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Unique {
    /// A unique index on the ID field of the target collection (the `_id` index for `_id`):
    /// a second document with the ID is refused by the server.
    #[default]
    Index,
    /// A proxy collection of claims, one per ID, written in the insert's transaction before
    /// the document: for collections where that unique index is impossible, such as a
    /// collection sharded on another field.
    Proxy,
}

impl Unique {
    /// Every value, in the order messages list them.
    pub const ALL: [Unique; 2] = [Unique::Index, Unique::Proxy];

    /// The name, as written in `#[seq(unique = "...")]`.
    pub const fn name(self) -> &'static str {
        match self {
            Unique::Index => "index",
            Unique::Proxy => "proxy",
        }
    }

    /// The name of the Rust variant, for generated code.
    pub const fn variant(self) -> &'static str {
        match self {
            Unique::Index => "Index",
            Unique::Proxy => "Proxy",
        }
    }

    /// The value named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|u| u.name() == name)
    }
}

/// The proxy collection of `unique = "proxy"` when `proxy` does not name one: the target
/// collection's name, then `.claims.`, then the name the ID is stored under.
///
/// ```
/// use sequence_rules::default_proxy;
/// assert_eq!(default_proxy("orders", "_id"), "orders.claims._id");
/// assert_eq!(default_proxy("invoices", "number"), "invoices.claims.number");
/// ```
pub fn default_proxy(collection: &str, id_field: &str) -> String {
    format!("{collection}.claims.{id_field}")
}

/// The fields of a shard's counter document that hold the bounds of its slice.
pub const SHARD_BOUND_FIELDS: [&str; 2] = ["lo", "hi"];
