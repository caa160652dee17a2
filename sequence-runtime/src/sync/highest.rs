//! The IDs already stored in a target collection: the highest value of one counter, for
//! skipping ahead after a duplicate key.
//!
//! Where the ID sorts as its number, the highest value is one index-backed query (`sort` on the
//! ID field, `limit 1`): integers, and text of a fixed width after a fixed prefix. Text without
//! a width (`"7"`, `"42"`) does not sort as its number, so it takes an aggregation that reads
//! every matching ID.

use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Collection;
use sequence_rules::encoding::Encoding;
use sequence_rules::limits::pow10;
use sequence_rules::pattern::escape_regex;

use crate::error::driver::Access;
use crate::error::{Error, Result};
use crate::id::{bson_integer, Bounds, Rendering};

/// Which BSON types the ID field of the documents holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdForm {
    /// Numbers (integer ID types).
    Number,
    /// Text (`String` IDs).
    Text,
}

/// Where the IDs of a counter are stored: a collection, its ID field, and the filter that
/// selects the documents of one counter's scope (empty without a scope).
pub(crate) struct StoredIds<'a> {
    pub(crate) coll: &'a Collection<Document>,
    pub(crate) field: &'a str,
    pub(crate) form: IdForm,
    pub(crate) scope: Document,
}

/// The highest stored counter value of a counter whose IDs render with `rendering` and whose
/// values lie in `space`; a stored value above `space.max` (of this counter's IDs) is reported
/// as the second value, `beyond`, which the caller turns into an error.
pub(crate) struct Highest {
    pub(crate) value: Option<i64>,
    pub(crate) beyond: Option<i64>,
}

impl StoredIds<'_> {
    /// The highest counter value stored for the counter whose IDs render with `rendering`,
    /// looking at the values of `space` and, above it, up to `limit` (the largest value the
    /// rendering can show, or `space.max` where the values above belong to another counter).
    pub(crate) async fn highest(
        &self,
        rendering: &Rendering,
        space: Bounds,
        limit: i64,
    ) -> Result<Highest> {
        let found = match (self.form, rendering.width()) {
            _ if rendering.spelling().is_some() => {
                self.highest_spelled(rendering, space.start, limit).await?
            }
            (IdForm::Number, _) => self.highest_number(rendering, space.start, limit).await?,
            (IdForm::Text, Some(width)) => {
                self.highest_padded(rendering, width, space.start, limit)
                    .await?
            }
            (IdForm::Text, None) => self.highest_unpadded(space.start, limit).await?,
        };
        Ok(match found {
            Some(v) if v > space.max => Highest {
                value: None,
                beyond: Some(v),
            },
            value => Highest {
                value,
                beyond: None,
            },
        })
    }

    /// Numbers: `prefix digits · 10^width + value`, found by an index-backed range query.
    async fn highest_number(
        &self,
        rendering: &Rendering,
        start: i64,
        limit: i64,
    ) -> Result<Option<i64>> {
        // A prefix with other characters than digits cannot be part of a number.
        let (Ok(lo), Ok(hi)) = (
            rendering.number(start, "i64"),
            rendering.number(limit, "i64"),
        ) else {
            return Ok(None);
        };
        let base = lo - start;
        let mut filter = self.scope.clone();
        filter.insert(self.field, doc! { "$gte": lo, "$lte": hi });
        let top = self.top(filter).await?;
        Ok(top.as_ref().and_then(bson_integer).map(|v| v - base))
    }

    /// Text of a fixed width after the prefix: it sorts as its number, so an index-backed
    /// range query finds the highest.
    async fn highest_padded(
        &self,
        rendering: &Rendering,
        width: u8,
        start: i64,
        limit: i64,
    ) -> Result<Option<i64>> {
        let prefix = rendering.prefix();
        let widest = pow10(width) - 1;
        let mut filter = self.scope.clone();
        filter.insert(
            self.field,
            doc! {
                "$gte": rendering.text(start.max(0))?,
                "$lte": rendering.text(limit.min(widest))?,
                "$regex": format!("^{}[0-9]{{{width}}}$", escape_regex(prefix)),
            },
        );
        let top = self.top(filter).await?;
        Ok(match top {
            Some(Bson::String(s)) => s.strip_prefix(prefix).and_then(|d| d.parse().ok()),
            _ => None,
        })
    }

    /// Text without a width: the text of a number does not sort as the number, so an
    /// aggregation reads every ID that is the text of a number.
    async fn highest_unpadded(&self, start: i64, limit: i64) -> Result<Option<i64>> {
        let field = format!("${}", self.field);
        let mut matched = self.scope.clone();
        matched.insert(
            self.field,
            doc! { "$type": "string", "$regex": "^(0|-?[1-9][0-9]{0,17})$" },
        );
        let pipeline = vec![
            doc! { "$match": matched },
            doc! { "$project": { "_id": 0, "n": { "$toLong": field } } },
            doc! { "$match": { "n": { "$gte": start, "$lte": limit } } },
            doc! { "$group": { "_id": Bson::Null, "max": { "$max": "$n" } } },
        ];
        let mut cursor = self
            .coll
            .aggregate(pipeline)
            .await
            .map_err(|e| self.error(e))?;
        let group = cursor.try_next().await.map_err(|e| self.error(e))?;
        Ok(group
            .as_ref()
            .and_then(|g| g.get("max"))
            .and_then(bson_integer))
    }

    /// IDs with check digits, another encoding or text after the number. Numbers with check
    /// digits, and text of a fixed width in an encoding that sorts (decimal, Crockford base
    /// 32), sort as their values: one index-backed query finds the highest. Other text (Sqids,
    /// numbers of varying width) is read ID by ID and parsed here.
    async fn highest_spelled(
        &self,
        rendering: &Rendering,
        start: i64,
        limit: i64,
    ) -> Result<Option<i64>> {
        let spelling = rendering
            .spelling()
            .expect("called for a spelled rendering");
        let check = spelling.check().map_or(0, |c| c.len() as u32);
        if self.form == IdForm::Number {
            let scale = 10_i64.pow(check);
            let block = |v: i64| rendering.number(v, "i64").map(|n| n / scale);
            let (Ok(lo), Ok(hi)) = (block(start.max(0)), block(limit)) else {
                return Ok(None);
            };
            let base = lo - start.max(0);
            let mut filter = self.scope.clone();
            filter.insert(
                self.field,
                doc! { "$gte": lo * scale, "$lte": hi * scale + scale - 1 },
            );
            let top = self.top(filter).await?;
            return Ok(top
                .as_ref()
                .and_then(bson_integer)
                .map(|v| v / scale - base));
        }
        let tail = spelling.tail();
        let (before, after) = (
            escape_regex(&tail.before_check),
            escape_regex(&tail.after_check),
        );
        let prefix = escape_regex(rendering.prefix());
        let sorted = match (spelling.encoding(), rendering.width()) {
            (Encoding::Decimal, Some(w)) => Some(format!("[0-9]{{{w}}}")),
            (Encoding::Crockford32, Some(w)) => Some(format!("[0-9A-HJKMNP-TV-Z]{{{w}}}")),
            _ => None,
        };
        if let Some(digits) = sorted {
            let mut filter = self.scope.clone();
            filter.insert(
                self.field,
                doc! {
                    "$gte": rendering.text(start.max(0))?,
                    "$lte": rendering.text(limit)?,
                    "$regex": format!("^{prefix}{digits}{before}.{{{check}}}{after}$"),
                },
            );
            let top = self.top(filter).await?;
            return Ok(match top {
                Some(Bson::String(id)) => rendering.parse(&id).ok(),
                _ => None,
            });
        }
        let mut filter = self.scope.clone();
        filter.insert(
            self.field,
            doc! { "$type": "string", "$regex": format!("^{prefix}.*{after}$") },
        );
        let mut projection = doc! { self.field: 1 };
        if self.field != "_id" {
            projection.insert("_id", 0);
        }
        let mut cursor = self
            .coll
            .find(filter)
            .projection(projection)
            .await
            .map_err(|e| self.error(e))?;
        let mut highest = None;
        while let Some(doc) = cursor.try_next().await.map_err(|e| self.error(e))? {
            let value = field_of(&doc, self.field)
                .and_then(|id| match id {
                    Bson::String(id) => rendering.parse(&id).ok(),
                    _ => None,
                })
                .filter(|v| (start..=limit).contains(v));
            highest = highest.max(value);
        }
        Ok(highest)
    }

    /// The ID field of the first document of `filter` in descending order of the ID field
    /// (a dotted path, such as `_id.id`, is followed into the document).
    async fn top(&self, filter: Document) -> Result<Option<Bson>> {
        let mut projection = doc! { self.field: 1 };
        if self.field != "_id" && !self.field.starts_with("_id.") {
            projection.insert("_id", 0);
        }
        let found = self
            .coll
            .find_one(filter)
            .sort(doc! { self.field: -1 })
            .projection(projection)
            .await
            .map_err(|e| self.error(e))?;
        Ok(found.and_then(|d| field_of(&d, self.field)))
    }

    fn error(&self, e: mongodb::error::Error) -> Error {
        Error::from_driver_on(e, self.coll.namespace(), Access::Find)
    }
}

/// The value at `field` (a dotted path, such as `_id.id`, is followed into the document).
fn field_of(d: &Document, field: &str) -> Option<Bson> {
    let mut parts = field.split('.');
    let first = d.get(parts.next()?)?.clone();
    parts.try_fold(first, |value, part| match value {
        Bson::Document(mut inner) => inner.remove(part),
        _ => None,
    })
}
