#![deny(warnings)]

use mongo_sequence::options::{CheckDigit, Encoding};
use mongo_sequence::SequentialId;
use serde::{Deserialize, Serialize};

/// Account numbers read over the phone: `ACC-00012345-5`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(format = "ACC-{n:08}-{check}", check_digit = "luhn", batch = 25)]
pub struct Account {
    #[serde(rename = "_id")]
    pub id: String,
}

/// Twelve digits and a Damm check digit, as a number.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(digits = 12, check_digit = "damm")]
pub struct Card {
    #[serde(rename = "_id")]
    pub id: i64,
}

/// A period and a number as one integer, with IBAN-style check digits: `2511000007xx`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(format = "{YY}{MM}{n}", check_digit = "mod97")]
pub struct Ledger {
    #[serde(rename = "_id")]
    pub id: i64,
}

/// Order codes typed from a receipt: `ORD-0016JD`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(
    prefix = "'ORD-'",
    width = 5,
    encoding = "crockford32",
    check_digit = "crockford"
)]
pub struct Order {
    #[serde(rename = "_id")]
    pub id: String,
}

/// Public links that do not reveal the count.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(
    encoding = "sqids",
    alphabet = "k3G7QAe51FCsPW92uEOyq4Bg6Sp8YzVTmnU0liwDdHXLajZrfxNhobJIRcMvKt",
    min_length = 8
)]
pub struct Link {
    #[serde(rename = "_id")]
    pub id: String,
}

/// The period in front, text behind: `2025/00042/EU`.
#[derive(Debug, Serialize, Deserialize, SequentialId)]
#[seq(format = "{YYYY}/{n:05}/EU")]
pub struct Filing {
    #[serde(rename = "_id")]
    pub id: String,
}

fn main() {
    let account = <Account as SequentialId>::SEQUENCE;
    assert_eq!(account.format, Some("ACC-{n:08}-{check}"));
    assert_eq!(account.check_digit, Some(CheckDigit::Luhn));
    assert_eq!(Account::parse_id("ACC-00012345-5").unwrap().value, 12_345);
    assert!(Account::parse_id("ACC-00012354-5").is_err());
    assert_eq!(
        <Card as SequentialId>::SEQUENCE.check_digit,
        Some(CheckDigit::Damm)
    );
    let valid = (0..10)
        .filter(|d| Card::parse_id(&format!("100000000000{d}")).is_ok())
        .count();
    assert_eq!(valid, 1, "one check digit per number");
    assert_eq!(
        <Ledger as SequentialId>::SEQUENCE.check_digit,
        Some(CheckDigit::Mod97)
    );
    assert!(Order::parse_id("ord-0016jd")
        .unwrap_err()
        .to_string()
        .contains("`ORD-`"));
    assert_eq!(Order::parse_id("ORD-0016jd").unwrap().value, 1234);
    assert_eq!(<Link as SequentialId>::SEQUENCE.encoding, Encoding::Sqids);
    assert_eq!(<Link as SequentialId>::SEQUENCE.min_length, 8);
    let filing = Filing::parse_id("2025/00042/EU").unwrap();
    assert_eq!((filing.value, filing.period.as_deref()), (42, Some("2025")));
}
