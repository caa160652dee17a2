//! [`Claims::repair`] and its action.

use std::future::IntoFuture;

use crate::claims::{self, Claims, RepairReport, DEFAULT_LIMIT};
use crate::error::Result;
use crate::store::BoxFuture;

impl Claims {
    /// Claims every document without a claim (after checking that no ID is held by two
    /// documents: [`Error::SharedIds`](crate::Error::SharedIds) lists them, and nothing is
    /// written), and with [`prune`](RepairClaims::prune) deletes the claims no document holds.
    pub fn repair(&self) -> RepairClaims<'_> {
        RepairClaims {
            claims: self,
            limit: DEFAULT_LIMIT,
            prune: false,
            dry_run: false,
        }
    }
}

/// The action returned by [`Claims::repair`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct RepairClaims<'a> {
    claims: &'a Claims,
    limit: usize,
    prune: bool,
    dry_run: bool,
}

impl RepairClaims<'_> {
    /// Also deletes the claims that no document holds (whose document is gone, or holds
    /// another ID now): their IDs may then be given again.
    pub fn prune(mut self, prune: bool) -> Self {
        self.prune = prune;
        self
    }

    /// Finds what would be written and deleted, and writes nothing.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// The most items of each kind the report lists (default [`DEFAULT_LIMIT`]).
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }
}

impl<'a> IntoFuture for RepairClaims<'a> {
    type Output = Result<RepairReport>;
    type IntoFuture = BoxFuture<'a, Result<RepairReport>>;

    fn into_future(self) -> Self::IntoFuture {
        let RepairClaims {
            claims,
            limit,
            prune,
            dry_run,
        } = self;
        Box::pin(claims::repair(claims, limit, prune, dry_run))
    }
}
