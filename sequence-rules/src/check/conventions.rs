//! The rules of the counter documents' conventions: what a layout has a place for, and what a
//! filter must tell apart.

use super::{Checker, FormatKeys};
use crate::filter::FilterValue;
use crate::key::Key;
use crate::layout::Layout;
use crate::names::{self, NameKind};
use crate::pattern::Pattern;
use crate::strategy::Strategy;
use crate::violation::At;

impl Checker<'_, '_> {
    /// `layout`: what the layout has a place for (periods, scope fields, shards).
    pub(super) fn layout(&mut self, f: &FormatKeys) {
        let layout = self.spec.layout.unwrap_or_default();
        if !self.on(Key::Layout) {
            return;
        }
        let name = layout.name();
        if f.periodic && !layout.has_periods() {
            self.v.at(
                Key::Layout,
                format!(
                    "the {name} layout has no periods: remove the date tokens from `prefix` or \
                     use the default layout"
                ),
            );
        }
        let scoped = if self.on(Key::Scope) {
            self.spec.scope.len()
        } else {
            0
        };
        match layout.scope_fields() {
            Some(0) if scoped > 0 => self.v.at(
                Key::Layout,
                format!(
                    "the {name} layout keeps one counter per model and field: it has no place \
                     for `scope`"
                ),
            ),
            Some(1) if scoped > 1 => self.v.at(
                Key::Layout,
                format!(
                    "the {name} layout keeps one scope value per counter, in `groupingField`: \
                     scope by one field"
                ),
            ),
            _ => {}
        }
        if self.strategy == Strategy::Ranges && !layout.has_shards() {
            self.v.at(
                Key::Layout,
                format!(
                    "the {name} layout keeps one counter per model and field: it has no place \
                     for the shards of `strategy = \"ranges\"`"
                ),
            );
        }
    }

    /// `filter`: its fields, and that it tells the counters of every period and scope apart.
    pub(super) fn filter(&mut self, f: &FormatKeys) {
        if !self.on(Key::Filter) {
            return;
        }
        let spec = self.spec;
        if let Some(layout) = spec
            .layout
            .filter(|l| *l != Layout::Default && self.on(Key::Layout))
        {
            self.v.at(
                Key::Filter,
                format!(
                    "`filter` says how counter documents are found, and so does `layout = \"{}\"`: \
                     keep one of them",
                    layout.name()
                ),
            );
            return;
        }
        let field = spec.field.unwrap_or(Layout::Default.field());
        let mut has_period = false;
        for (i, ff) in spec.filter.iter().enumerate() {
            let at = At::FilterField(i);
            if spec.filter[..i].iter().any(|o| o.field == ff.field) {
                self.v
                    .push(at, format!("`filter` names the field `{}` twice", ff.field));
                continue;
            }
            if names::check(NameKind::Field, ff.field).is_err() {
                self.v.name(at, NameKind::Field, ff.field);
                continue;
            }
            if ff.field == field {
                self.v.push(
                    at,
                    format!(
                        "the filter field `{field}` is the counter field (`field = \"{field}\"`): \
                         the filter finds the counter document, the counter field counts"
                    ),
                );
            }
            has_period |= matches!(ff.value, FilterValue::Period | FilterValue::PeriodNumber);
            match &ff.value {
                FilterValue::Period | FilterValue::PeriodNumber if !f.periodic => {
                    self.v.push(
                        at,
                        "`period` needs a `prefix` with date tokens (`YYYY`, `YY`, `MM`, `DD`, \
                         `HH`)",
                    );
                }
                FilterValue::PeriodNumber
                    if f.pattern.as_ref().is_some_and(Pattern::has_literal) =>
                {
                    self.v.push(
                        at,
                        format!(
                            "`period as number` needs a `prefix` of date tokens alone, such as \
                             `YYMMDD`: `{}` does not read as a number; write `period` to store \
                             the period as text",
                            spec.prefix.unwrap_or_default()
                        ),
                    );
                }
                FilterValue::Scope(s) if !spec.scope.contains(s) => {
                    let known = if spec.scope.is_empty() {
                        "the model has no `scope`".to_owned()
                    } else {
                        format!(
                            "`scope` has {}",
                            crate::key::list(spec.scope.iter().copied())
                        )
                    };
                    self.v.push(
                        at,
                        format!(
                            "`scope({s})` names no field of `scope` ({known}){}",
                            crate::suggest::did_you_mean(s, spec.scope.iter().copied())
                        ),
                    );
                }
                _ => {}
            }
        }
        if f.periodic && !has_period {
            self.v.at(
                Key::Filter,
                "a `prefix` with date tokens has a counter per period: add the period to the \
                 filter (`<field> = period`, or `period as number`)",
            );
        }
        for (i, s) in spec.scope.iter().enumerate() {
            let found = spec
                .filter
                .iter()
                .any(|ff| matches!(ff.value, FilterValue::Scope(v) if v == *s));
            if !found && self.on(Key::Scope) {
                self.v.push(
                    At::ScopeField(i),
                    format!(
                        "the scope field `{s}` is in no field of `filter`, so every `{s}` would \
                         share one counter: add `{s} = scope({s})` to the filter"
                    ),
                );
            }
        }
    }
}
