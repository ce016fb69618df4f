//! Substring search and slicing that never panic, for the short texts the
//! relayer reads: node error messages (classification, retry hints, batch
//! limits) and endpoint URLs (redaction). `str::contains(&str)`, `find`,
//! `split_once`, `replace` and `&s[a..b]` bring core's two-way searcher
//! and its slice panic, whose message formats a `char` with `Debug` and so
//! carries Unicode's printable tables: about 8 KB of the module every page
//! loads, for a handful of searches over texts of tens of bytes. These
//! compare bytes; a whole UTF-8 needle found in UTF-8 text starts and ends
//! on char boundaries, so the `get`s below never come back empty on a
//! match. Quadratic in the worst case: for messages and URLs, whose length
//! the transport bounds, never for a response body.

/// The byte offset of the first `needle` in `hay` (`Some(0)` for an empty one).
pub fn find(hay: &str, needle: &str) -> Option<usize> {
    find_from(hay, needle, 0)
}

/// Whether `needle` occurs in `hay`.
pub fn contains(hay: &str, needle: &str) -> bool {
    find(hay, needle).is_some()
}

/// `s` split around the first `pat`: `("a", "b")` for `"a://b"` and `"://"`.
pub fn split_once<'a>(s: &'a str, pat: &str) -> Option<(&'a str, &'a str)> {
    let at = find(s, pat)?;
    Some((s.get(..at)?, s.get(at + pat.len()..)?))
}

/// `s` from byte `at` on: empty past its end (or inside a char, which a
/// caller's own offsets never are).
pub fn from(s: &str, at: usize) -> &str {
    s.get(at..).unwrap_or("")
}

/// `s` split at byte `at`: all of `s` and nothing past its end (or inside a char).
pub fn split_at(s: &str, at: usize) -> (&str, &str) {
    match (s.get(..at), s.get(at..)) {
        (Some(head), Some(tail)) => (head, tail),
        _ => (s, ""),
    }
}

/// Every offset where `needle` starts in `hay`, in order, matches not
/// overlapping (as `str::match_indices`); none for an empty needle.
pub fn match_starts<'a>(hay: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    let mut next = Some(0);
    std::iter::from_fn(move || {
        if needle.is_empty() {
            return None;
        }
        let at = find_from(hay, needle, next?)?;
        next = Some(at + needle.len());
        Some(at)
    })
}

/// `hay` with every `old` replaced by `new` (as `str::replace`; `hay` unchanged for an empty `old`).
pub fn replace(hay: &str, old: &str, new: &str) -> String {
    let mut out = String::with_capacity(hay.len());
    let mut rest = 0;
    for at in match_starts(hay, old) {
        out.push_str(hay.get(rest..at).unwrap_or(""));
        out.push_str(new);
        rest = at + old.len();
    }
    out.push_str(from(hay, rest));
    out
}

/// The first `needle` in `hay` at or after byte `start`.
fn find_from(hay: &str, needle: &str, start: usize) -> Option<usize> {
    let (hay, needle) = (hay.as_bytes(), needle.as_bytes());
    let rest = hay.get(start..)?;
    if needle.is_empty() {
        return Some(start);
    }
    rest.windows(needle.len()).position(|w| w == needle).map(|at| start + at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn searches_as_the_standard_library_does() {
        let cases = [
            ("rate limit exceeded", "limit"),
            ("limit", "limit"),
            ("lim", "limit"),
            ("", "x"),
            ("abc", ""),
            ("aaaa", "aa"),
            ("héllo wörld", "wörld"),
            ("héllo wörld", "ö"),
            ("https://key@host/path", "://"),
        ];
        for (hay, needle) in cases {
            assert_eq!(find(hay, needle), hay.find(needle), "{hay} / {needle}");
            assert_eq!(contains(hay, needle), hay.contains(needle), "{hay} / {needle}");
            assert_eq!(split_once(hay, needle), hay.split_once(needle), "{hay} / {needle}");
            assert_eq!(
                replace(hay, needle, "<>"),
                if needle.is_empty() { hay.to_string() } else { hay.replace(needle, "<>") }
            );
            let ours: Vec<usize> = match_starts(hay, needle).collect();
            let theirs: Vec<usize> =
                if needle.is_empty() { vec![] } else { hay.match_indices(needle).map(|(at, _)| at).collect() };
            assert_eq!(ours, theirs, "{hay} / {needle}");
        }
    }

    #[test]
    fn slices_never_panic() {
        assert_eq!(from("abc", 1), "bc");
        assert_eq!(from("abc", 3), "");
        assert_eq!(from("abc", 9), "");
        assert_eq!(from("é", 1), "", "inside a char: empty, not a panic");
        assert_eq!(split_at("abc", 1), ("a", "bc"));
        assert_eq!(split_at("abc", 3), ("abc", ""));
        assert_eq!(split_at("abc", 7), ("abc", ""));
        assert_eq!(split_at("é", 1), ("é", ""));
    }
}
