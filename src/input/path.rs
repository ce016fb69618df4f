//! Where in the input a decode is, so a refusal can name the full path.
//!
//! serde hands errors up through the host format's own error type, which
//! carries no path; instead each shape of this contract says where it is
//! going before it decodes a nested value (`within`), and takes it back
//! after. A failure skips the take-back, so when `decode` sees the error
//! the stack is the path to the refused value. The stack is per thread and
//! reset by every `decode`, so one decoding never sees another's.
//!
//! Refusals this contract makes itself (an unknown key, with its hint) are
//! recorded here whole, not written into the host's error text.

use std::cell::RefCell;

use serde::de::Error;

use crate::config_error::ConfigError;

#[derive(Default)]
struct Track {
    /// Segments, each already written (`.breaker`, `[2]`).
    segments: Vec<String>,
    /// This contract's own refusal (its reason), if it made one.
    refusal: Option<String>,
}

thread_local! {
    static TRACK: RefCell<Track> = RefCell::default();
}

/// Starts a decode at the root.
pub fn reset() {
    TRACK.with(|t| *t.borrow_mut() = Track::default());
}

/// Decodes `f` one level down, at `segment` (`.key` or `[i]`).
pub fn within<T, E>(segment: String, f: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    TRACK.with(|t| t.borrow_mut().segments.push(segment));
    let out = f()?;
    TRACK.with(|t| t.borrow_mut().segments.pop());
    Ok(out)
}

/// The path so far under `root` (`""` or `"upstreams"`).
pub fn current(root: &str) -> String {
    TRACK.with(|t| {
        let mut path = root.to_string();
        for s in &t.borrow().segments {
            path.push_str(if path.is_empty() { s.trim_start_matches('.') } else { s });
        }
        path
    })
}

/// Refuses here with `reason`; the host error only carries it up.
pub fn refuse<E: Error>(reason: String) -> E {
    TRACK.with(|t| t.borrow_mut().refusal = Some(reason));
    E::custom("refused")
}

/// The refusal this contract made, if any, with its path under `root`.
pub fn take_refusal(root: &str) -> Option<ConfigError> {
    let reason = TRACK.with(|t| t.borrow_mut().refusal.take())?;
    Some(ConfigError::new(current(root), reason))
}
