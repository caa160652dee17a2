//! The parsers of argument values that are not plain text or numbers.

use mongodb::bson::Bson;
use sequence_runtime::options::{filter, CheckDigit, Encoding, FilterField, Layout, Stores};
use serde_json::Value;

/// `field=value`, the value as JSON where it is JSON, else as text.
pub(super) fn scope_value(arg: &str) -> Result<(String, Bson), String> {
    let (field, value) = arg
        .split_once('=')
        .ok_or_else(|| format!("`{arg}` is not `field=value`"))?;
    let value = match serde_json::from_str::<Value>(value) {
        Ok(json) => Bson::try_from(json).map_err(|e| e.to_string())?,
        Err(_) => Bson::String(value.to_owned()),
    };
    Ok((field.to_owned(), value))
}

/// A layout's name.
pub(super) fn layout(arg: &str) -> Result<Layout, String> {
    if let Some(now) = Layout::renamed(arg) {
        return Err(now.to_owned());
    }
    one_of(
        arg,
        Layout::from_name(arg),
        Layout::ALL.iter().map(|l| l.name()),
    )
}

/// A check digit algorithm, as given to `--check-digit`.
pub(super) fn check_digit(arg: &str) -> Result<CheckDigit, String> {
    one_of(arg, CheckDigit::from_name(arg), CheckDigit::NAMES)
}

/// An encoding, as given to `--encoding`.
pub(super) fn encoding(arg: &str) -> Result<Encoding, String> {
    one_of(
        arg,
        Encoding::from_name(arg),
        Encoding::ALL.map(Encoding::name),
    )
}

/// The fields of a filter that finds counter documents, as given to `--filter`.
#[derive(Clone, Debug)]
pub(crate) struct Filter(pub(crate) Vec<FilterField>);

/// The fields of a filter, as `field = value, …`.
pub(super) fn filter_fields(arg: &str) -> Result<Filter, String> {
    filter::parse(arg).map(Filter).map_err(|e| e.to_string())
}

/// `last_issued` or `next_free`.
pub(super) fn stores(arg: &str) -> Result<Stores, String> {
    one_of(arg, Stores::from_name(arg), Stores::ALL.map(Stores::name))
}

/// `found`, or a message naming the values `arg` is not one of.
fn one_of<T, I>(arg: &str, found: Option<T>, names: I) -> Result<T, String>
where
    I: IntoIterator<Item = &'static str>,
{
    found.ok_or_else(|| {
        let names: Vec<&str> = names.into_iter().collect();
        format!("`{arg}` is not one of {}", names.join(", "))
    })
}
