//! [`Claims::check`] and its action.

use std::future::IntoFuture;

use crate::claims::{self, Claims, ClaimsReport, DEFAULT_LIMIT};
use crate::error::Result;
use crate::store::BoxFuture;

impl Claims {
    /// Finds the documents without a claim, the claims without a document and the IDs held by
    /// two or more documents; writes nothing.
    pub fn check(&self) -> CheckClaims<'_> {
        CheckClaims {
            claims: self,
            limit: DEFAULT_LIMIT,
        }
    }
}

/// The action returned by [`Claims::check`]; `.await` it.
#[must_use = "an action does nothing until it is awaited"]
pub struct CheckClaims<'a> {
    claims: &'a Claims,
    limit: usize,
}

impl CheckClaims<'_> {
    /// The most items of each kind the report lists (default [`DEFAULT_LIMIT`]); all are
    /// counted.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }
}

impl<'a> IntoFuture for CheckClaims<'a> {
    type Output = Result<ClaimsReport>;
    type IntoFuture = BoxFuture<'a, Result<ClaimsReport>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(claims::check(self.claims, self.limit))
    }
}
