//! "Did you mean …?": the name a misspelled one was probably meant to be.

/// The candidate closest to `written` by edit distance (insertions, deletions, substitutions
/// and transpositions of adjacent characters, ignoring case), if it is close enough to be a
/// misspelling: 1 edit for names up to 4 characters, 2 up to 8, 3 beyond. The first of equally
/// close candidates.
///
/// ```
/// use sequence_rules::suggest::closest;
///
/// let keys = ["name", "batch", "prefix", "width"];
/// assert_eq!(closest("bach", keys), Some("batch"));
/// assert_eq!(closest("prefx", keys), Some("prefix"));
/// assert_eq!(closest("colour", keys), None);
/// ```
pub fn closest<'a>(
    written: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = written.to_lowercase();
    let allowed = match lower.chars().count() {
        0..=4 => 1,
        5..=8 => 2,
        _ => 3,
    };
    candidates
        .into_iter()
        .filter(|&c| c != written)
        .map(|c| (strsim::damerau_levenshtein(&lower, &c.to_lowercase()), c))
        .filter(|&(distance, _)| distance <= allowed)
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, c)| c)
}

/// `"; did you mean `{closest}`?"`, or nothing when no candidate is close: the tail of a
/// message about the unknown name `written`.
pub fn did_you_mean<'a>(written: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(written, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspellings_find_their_name_and_others_find_none() {
        let keys = ["batch", "scope", "start", "strategy", "stores"];
        assert_eq!(closest("bach", keys), Some("batch"));
        assert_eq!(
            closest("Batch", keys),
            Some("batch"),
            "another case is one too"
        );
        assert_eq!(
            closest("scpoe", keys),
            Some("scope"),
            "a transposition is one edit"
        );
        assert_eq!(closest("stratgey", keys), Some("strategy"));
        assert_eq!(closest("zzzz", keys), None);
        assert_eq!(
            did_you_mean("tenat", ["tenant", "title"]),
            "; did you mean `tenant`?"
        );
        assert_eq!(did_you_mean("xyz", ["tenant"]), "");
    }
}
