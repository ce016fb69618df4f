//! A decoding failure as the `ConfigError` a user can act on: the full
//! option path (`path.rs`), what was expected in plain words, and for an
//! unknown key the known name it most likely meant (`nearest`).
//!
//! Refusals this contract makes itself are recorded whole (`path::refuse`).
//! Type mismatches are reported by serde through the host format's error,
//! in the words serde's default constructor writes ("invalid type: …,
//! expected …"), whose expected part is this contract's own wording. The
//! value that was refused is never repeated: it may be a secret in the
//! wrong field.

use std::fmt::Display;

use serde::{Deserialize, Deserializer};

use super::path;
use crate::config_error::ConfigError;

/// Decodes `T` from `d`; a failure names its path under `root`
/// (`""` for the options object, `"upstreams"` for the list).
pub fn decode<'de, T, D>(d: D, root: &str) -> Result<T, ConfigError>
where
    T: Deserialize<'de>,
    D: Deserializer<'de>,
    D::Error: Display,
{
    path::reset();
    T::deserialize(d).map_err(|e| {
        let error = path::take_refusal(root).unwrap_or_else(|| refusal(path::current(root), &e.to_string()));
        path::reset();
        error
    })
}

/// The error for `message` (serde's wording) at `path`.
fn refusal(path: String, message: &str) -> ConfigError {
    // A JS `Error` turned to text starts with its name.
    let message = message.strip_prefix("Error: ").unwrap_or(message);
    for kind in ["invalid type: ", "invalid value: "] {
        if let Some((_, expected)) = message.strip_prefix(kind).and_then(|m| m.rsplit_once(", expected ")) {
            return ConfigError::new(field(path), format!("must be {expected}"));
        }
    }
    if message.contains("BigInt outside") {
        // serde-wasm-bindgen's own words for a bigint past 64 bits.
        return ConfigError::new(field(path), "is a bigint out of range");
    }
    ConfigError::new(field(path), message)
}

/// The options object itself has no path of its own.
fn field(path: String) -> String {
    if path.is_empty() {
        "options".into()
    } else {
        path
    }
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
    fn serde_messages_become_reasons_without_the_refused_value() {
        let e = refusal("x".into(), "Error: invalid type: string \"sk-secret\", expected a number");
        assert_eq!((e.field(), e.reason()), ("x", "must be a number"));
        assert!(!e.to_string().contains("secret"));
        let e = refusal("".into(), "invalid type: string \"fast\", expected an object");
        assert_eq!((e.field(), e.reason()), ("options", "must be an object"));
        let e = refusal("a".into(), "something else");
        assert_eq!((e.field(), e.reason()), ("a", "something else"));
    }
}
