//! [`SequenceOptions`] and its builder, declared from the table of keys
//! (`mongo_sequence_rules::for_each_key!`) plus the options only the runtime has.

use std::sync::Arc;

use mongo_sequence_rules::{self as rules, defaults, Spec};
use mongodb::options::WriteConcern;

use super::forms::{builder_setter, owned_type, to_spec};
use crate::error::Result;
use crate::values::{Bounds, Clock, Format, SystemClock};

/// Declares [`SequenceOptions`], its builder and its `Spec` from the rows of the table.
macro_rules! declare_options {
    (
        name { $(#[doc = $ndoc:literal])* $nv:ident $nf:ident $nname:literal; }
        keys { $($(#[doc = $doc:literal])* $v:ident $f:ident $name:literal: $form:ident [$($ty:tt)*] = [$($default:tt)*] => $strategies:ident;)* }
        derive_only { $($(#[doc = $ddoc:literal])* $dv:ident $df:ident $dname:literal;)* }
    ) => {
        /// Options of one sequence (one counter): the keys of `#[seq(...)]` under the same
        /// names, each at its default until set, and the options only the runtime has.
        ///
        /// ```
        /// # use mongo_sequence_runtime::{SequenceOptions, Batch};
        /// let opts = SequenceOptions::builder("userid").batch(25).start(1000).build();
        /// assert_eq!(opts.batch, Batch::Fixed(25));
        /// assert_eq!(opts.counters, "counters");
        /// ```
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub struct SequenceOptions {
            $(#[doc = $ndoc])*
            pub $nf: String,
            $($(#[doc = $doc])* pub $f: owned_type!($form, [$($ty)*]),)*
            /// Share of the current range after which the next range is reserved in the
            /// background (0.0 to 1.0; default 0.1). Only used when more than one value is
            /// reserved at a time.
            pub prefetch_at: f64,
            /// Write concern of counter updates (default `majority`; `None` uses the
            /// collection's).
            pub write_concern: Option<WriteConcern>,
            /// Where the current time comes from, for periods (default [`SystemClock`]).
            pub clock: Arc<dyn Clock>,
        }

        impl SequenceOptions {
            /// A builder for a sequence named `name`, with every other option at its default.
            pub fn builder($nf: impl Into<String>) -> SequenceOptionsBuilder {
                SequenceOptionsBuilder {
                    options: SequenceOptions {
                        $nf: $nf.into(),
                        $($f: super::forms::to_owned!(
                            $form,
                            super::forms::static_default!($form, [$($default)*])
                        ),)*
                        prefetch_at: defaults::PREFETCH_AT,
                        write_concern: Some(WriteConcern::majority()),
                        clock: Arc::new(SystemClock),
                    },
                }
            }

            /// The options as the rules see them: an option counts as given when it differs
            /// from its default.
            fn spec(&self) -> Spec<'_> {
                Spec {
                    $($f: to_spec!($form, self.$f, [$($default)*]),)*
                    prefetch_at: Some(self.prefetch_at),
                    ..Spec::new(&self.$nf)
                }
            }
        }

        impl SequenceOptionsBuilder {
            $(builder_setter!($(#[doc = $doc])* $f: $form [$($ty)*]);)*
        }
    };
}

rules::for_each_key!(declare_options);

impl SequenceOptions {
    /// Checks every option with the rules `#[derive(SequentialId)]` checks at compile time;
    /// returns the bounds they describe. Fails with [`Error::InvalidName`](crate::Error::InvalidName) or
    /// [`Error::InvalidConfig`](crate::Error::InvalidConfig), the first rule broken.
    pub fn validate(&self) -> Result<Bounds> {
        self.checked().map(|(bounds, _)| bounds)
    }

    /// Checks every option; returns the bounds and the format they describe.
    pub(crate) fn checked(&self) -> Result<(Bounds, Format)> {
        let checked = rules::check(&self.spec()).map_err(|mut broken| broken.swap_remove(0))?;
        let bounds = Bounds::new(checked.start, checked.max)?;
        let format = Format::new(&self.name, checked.pattern, checked.tz, checked.width);
        Ok((bounds, format))
    }
}

/// `value`, unless it is the default.
fn given<T: PartialEq>(value: T, default: T) -> Option<T> {
    (value != default).then_some(value)
}

/// Builds [`SequenceOptions`]; see [`SequenceOptions::builder`]. It has a setter for every
/// option, named as the option.
#[derive(Clone, Debug)]
#[must_use]
pub struct SequenceOptionsBuilder {
    options: SequenceOptions,
}

impl SequenceOptionsBuilder {
    /// Sets the share of a range after which the next one is prefetched.
    pub fn prefetch_at(mut self, share: f64) -> Self {
        self.options.prefetch_at = share;
        self
    }

    /// Sets the write concern of counter updates (`None`: the collection's own).
    pub fn write_concern(mut self, wc: Option<WriteConcern>) -> Self {
        self.options.write_concern = wc;
        self
    }

    /// Sets the clock that decides the current period.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.options.clock = clock;
        self
    }

    /// Makes IDs with the ranges strategy: `shards` counter documents, each owning a slice of
    /// the space, one picked at random per reservation.
    ///
    /// ```
    /// # use mongo_sequence_runtime::{SequenceOptions, Strategy};
    /// let opts = SequenceOptions::builder("account").ranges(1000).digits(12).build();
    /// assert_eq!((opts.strategy, opts.shards), (Strategy::Ranges, 1000));
    /// ```
    pub fn ranges(self, shards: u32) -> Self {
        self.strategy(rules::Strategy::Ranges).shards(shards)
    }

    /// The options.
    pub fn build(self) -> SequenceOptions {
        self.options
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::error::Error;
    use mongo_sequence_rules::{Batch, Layout};

    #[test]
    fn validation_says_what_is_wrong() {
        let bad = SequenceOptions::builder("x").batch(0).build();
        assert!(bad.validate().unwrap_err().to_string().contains("`batch`"));
        let bad = SequenceOptions::builder("x").start(10).max(5).build();
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("`start` (10)"));
        let bad = SequenceOptions::builder("$x").build();
        assert!(matches!(bad.validate(), Err(Error::InvalidName { .. })));
        let bad = SequenceOptions::builder("x").prefetch_at(1.5).build();
        assert!(bad.validate().is_err());
        let bad = SequenceOptions::builder("x")
            .batch(mongo_sequence_rules::AdaptiveBatch::new(10, 5))
            .build();
        assert!(bad.validate().is_err());
        assert!(SequenceOptions::builder("x").build().validate().is_ok());
    }

    #[test]
    fn only_options_that_differ_from_their_default_count_as_given() {
        let defaults = SequenceOptions::builder("x").build();
        let spec = defaults.spec();
        for &key in rules::Key::ALL {
            assert_eq!(spec.given(key), key == rules::Key::Name, "{key}");
        }
        let o = SequenceOptions::builder("x")
            .ranges(4)
            .layout(Layout::Mongoose)
            .batch(10..=100)
            .transaction_timeout(Duration::from_secs(5))
            .build();
        let spec = o.spec();
        assert_eq!(spec.shards, Some(4));
        assert_eq!(spec.layout, Some(Layout::Mongoose));
        assert_eq!(spec.batch, Some(Batch::from(10..=100)));
        assert_eq!(spec.transaction_timeout, Some(Duration::from_secs(5)));
        assert_eq!(spec.field, None);
    }
}
