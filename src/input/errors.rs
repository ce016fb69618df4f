//! A decoding failure as the `ConfigError` a user can act on: the full
//! option path (the refusal's segments under its root), what was expected
//! in plain words, and for an unknown key the known name it most likely
//! meant (`nearest`). The value that was refused is never repeated: it
//! may be a secret in the wrong field.

use crate::config_error::ConfigError;

/// Why a value was refused, and where: the path's segments, innermost first.
#[derive(Debug)]
pub struct Refusal {
    /// Segments, each already written (`.breaker`, `[2]`), innermost first.
    pub segments: Vec<String>,
    /// What a user reads: "must be a number", "unknown option (…)".
    pub reason: String,
}

impl Refusal {
    /// A refusal of the value being decoded.
    pub fn new(reason: impl Into<String>) -> Refusal {
        Refusal { segments: Vec::new(), reason: reason.into() }
    }

    /// The refusal for a value that is not `expected` (a value refused is never
    /// repeated: it may be a secret in the wrong field).
    pub fn expected(expected: &str) -> Refusal {
        Refusal::new(format!("must be {expected}"))
    }
}

/// The error for `refusal` under `root` (`""` for the options object,
/// `"upstreams"` for the list).
pub(super) fn config_error(refusal: Refusal, root: &str) -> ConfigError {
    let mut path = root.to_string();
    for segment in refusal.segments.iter().rev() {
        path.push_str(if path.is_empty() { segment.trim_start_matches('.') } else { segment });
    }
    // The options object itself has no path of its own.
    if path.is_empty() {
        path = "options".into();
    }
    ConfigError::new(path, refusal.reason)
}

/// The known name a typo most likely meant: the closest by edits (case
/// differences count half), if within a third of the name (rounded up,
/// at least two: `maxRetry` → `maxRetries`).
pub fn nearest(unknown: &str, known: &[&str]) -> Option<String> {
    let limit = unknown.chars().count().div_ceil(3).max(2) * 2;
    known
        .iter()
        .map(|k| (distance(unknown, k), k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k.to_string())
}

/// Edit distance in half steps: a case-only difference costs 1, any other
/// substitution, insertion or deletion 2.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).map(|j| j * 2).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = (i + 1) * 2;
        for (j, cb) in b.iter().enumerate() {
            let swap = match (ca == *cb, ca.eq_ignore_ascii_case(cb)) {
                (true, _) => 0,
                (false, true) => 1,
                (false, false) => 2,
            };
            let next = (diagonal + swap).min(row[j] + 2).min(row[j + 1] + 2);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_is_matched_to_the_nearest_known_name_and_nonsense_to_none() {
        let known = ["maxRetries", "maxDelayMs", "baseDelayMs", "deadlineMs"];
        assert_eq!(nearest("maxRetrys", &known).as_deref(), Some("maxRetries"));
        assert_eq!(nearest("maxdelayms", &known).as_deref(), Some("maxDelayMs"), "case slips are near");
        assert_eq!(nearest("deadline", &known).as_deref(), Some("deadlineMs"));
        assert_eq!(nearest("maxRetry", &known).as_deref(), Some("maxRetries"), "three edits of eight");
        assert_eq!(nearest("maxEntry", &["maxEntries", "latestTtlMs"]).as_deref(), Some("maxEntries"));
        assert_eq!(nearest("logger", &known), None);
        assert_eq!(distance("abc", "abc"), 0);
        assert_eq!(distance("abc", "aBc"), 1);
        assert_eq!(distance("abc", "ab"), 2);
        assert_eq!(distance("", "ab"), 4);
        assert_eq!(distance("abc", ""), 6, "each deletion costs a full step");
        assert_eq!(distance("abcd", "x"), 8);
        // The slack grows with the name: a third of its length in edits.
        let known = ["abcdefghijklmnopqr"];
        assert_eq!(nearest("abcdefghijklmnSTUV", &known).as_deref(), Some("abcdefghijklmnopqr"), "4 edits of 18");
        assert_eq!(nearest("abcdefghijklRSTUVW", &known).as_deref(), Some("abcdefghijklmnopqr"), "6 edits of 18");
        assert_eq!(nearest("abcdefghijkRSTUVWX", &known), None, "7 edits of 18");
    }

    #[test]
    fn a_refusal_is_named_by_its_path_under_its_root() {
        let at = |segments: &[&str], root| {
            let refusal = Refusal { segments: segments.iter().map(|s| s.to_string()).collect(), reason: "r".into() };
            config_error(refusal, root).field().to_string()
        };
        assert_eq!(at(&[".ratio", ".budget"], ""), "budget.ratio");
        assert_eq!(at(&[".url", "[1]"], "upstreams"), "upstreams[1].url");
        assert_eq!(at(&[], ""), "options", "the options object itself");
        assert_eq!(at(&[], "upstreams"), "upstreams");
    }
}
