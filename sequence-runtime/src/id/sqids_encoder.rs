//! Sqids IDs at the cost of their encoding alone. The `sqids` crate checks every ID it makes
//! against its blocklist of about 560 words one word at a time, which takes several times
//! longer than making the ID. Here the ID is made by an encoder with an empty blocklist, then
//! checked against the same words, filtered as the crate filters them, in one pass of an
//! Aho-Corasick automaton with the crate's rules; only an ID that meets a word (about one in
//! 1,500) is made again by the crate's own encoder, which moves on to the next ID. The IDs are
//! the same as the crate's, value for value.

use aho_corasick::AhoCorasick;
use sqids::Sqids;

/// A Sqids encoder that checks its IDs against the default blocklist in one pass.
pub(crate) struct SqidsEncoder {
    /// The encoder without a blocklist: the first ID the crate tries.
    first: Sqids,
    /// The crate's encoder with its default blocklist, for the IDs that meet a word.
    full: Sqids,
    /// The blocklist's words that can occur in IDs of the alphabet.
    words: Vec<String>,
    /// An automaton of `words`, ASCII case ignored (the alphabet is ASCII).
    automaton: AhoCorasick,
}

impl SqidsEncoder {
    /// The encoder of IDs of `alphabet` (the crate's default if `None`) at least `min_length`
    /// long.
    pub(crate) fn new(alphabet: Option<&str>, min_length: u8) -> Result<Self, sqids::Error> {
        let options = |blocklist| {
            sqids::Options::new(alphabet.map(str::to_owned), Some(min_length), blocklist)
        };
        let full = Sqids::new(Some(options(None)))?;
        let first = Sqids::new(Some(options(Some(Default::default()))))?;
        let lowercase: Vec<char> = alphabet
            .unwrap_or(sqids::DEFAULT_ALPHABET)
            .chars()
            .map(|c| c.to_ascii_lowercase())
            .collect();
        // The words the crate keeps: lowercase, at least 3 characters, all in the alphabet.
        let mut words: Vec<String> = sqids::default_blocklist()
            .into_iter()
            .map(|w| w.to_lowercase())
            .filter(|w| w.len() >= 3 && w.chars().all(|c| lowercase.contains(&c)))
            .collect();
        words.sort();
        words.dedup();
        let automaton = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&words)
            .expect("a few hundred short words make an automaton");
        Ok(SqidsEncoder {
            first,
            full,
            words,
            automaton,
        })
    }

    /// The ID of `value`, as the crate's encoder with its default blocklist makes it.
    pub(crate) fn encode(&self, value: u64) -> Result<String, sqids::Error> {
        let id = self.first.encode(&[value])?;
        if self.blocked(&id) {
            return self.full.encode(&[value]);
        }
        Ok(id)
    }

    /// The numbers `id` stands for (empty if it is not an ID of this alphabet).
    pub(crate) fn decode(&self, id: &str) -> Vec<u64> {
        self.first.decode(id)
    }

    /// Whether `id` meets a word of the blocklist by the crate's rules: an ID or a word of at
    /// most 3 characters only as the whole ID, a word with a digit only at the start or the
    /// end, any other word anywhere.
    fn blocked(&self, id: &str) -> bool {
        let len = id.len();
        self.automaton.find_overlapping_iter(id).any(|m| {
            let word = &self.words[m.pattern().as_usize()];
            let whole = m.start() == 0 && m.end() == len;
            if len <= 3 || word.len() <= 3 {
                whole
            } else if word.bytes().any(|b| b.is_ascii_digit()) {
                m.start() == 0 || m.end() == len
            } else {
                true
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every ID of the first 20,000 values is the crate's, for the default alphabet and a
    /// shuffled one, with and without a minimum length; some IDs of the default alphabet met a
    /// word, so both ways of making an ID are compared.
    #[test]
    fn ids_are_the_crates_own_value_for_value() {
        for (alphabet, min_length) in [
            (None, 0),
            (None, 8),
            (
                Some("k3G7QAe51FCsPW92uEOyq4Bg6Sp8YzVTmnU0liwDdHXLajZrfxNhobJIRcMvKt"),
                4,
            ),
        ] {
            let ours = SqidsEncoder::new(alphabet, min_length).unwrap();
            let options = sqids::Options::new(alphabet.map(str::to_owned), Some(min_length), None);
            let crate_own = Sqids::new(Some(options)).unwrap();
            let mut met_a_word = 0;
            for value in 0..20_000 {
                let id = ours.encode(value).unwrap();
                assert_eq!(id, crate_own.encode(&[value]).unwrap(), "value {value}");
                assert_eq!(ours.decode(&id), [value]);
                if id != ours.first.encode(&[value]).unwrap() {
                    met_a_word += 1;
                }
            }
            if alphabet.is_none() {
                assert!(
                    met_a_word > 0,
                    "no ID of min length {min_length} met a word"
                );
            }
        }
    }

    #[test]
    fn words_follow_the_crates_rules() {
        let ours = SqidsEncoder::new(None, 0).unwrap();
        // A word of 3 characters only as the whole ID.
        assert!(ours.blocked("CuM"));
        assert!(!ours.blocked("xcumy"));
        // A longer word anywhere, in either case.
        assert!(ours.blocked("xANALy"));
        // A word with a digit only at the start or the end.
        assert!(ours.blocked("b00bxy"));
        assert!(ours.blocked("xyb00b"));
        assert!(!ours.blocked("xb00by"));
        assert!(!ours.blocked("x7Kq2"));
    }
}
