//! The numeric limits every option obeys, said once: what a duration, a
//! whole number or a bounded number may be, and how a refusal reads. The
//! relayer's options, the pool's and the endpoints' all check through
//! here, so no option is checked twice against two different limits.

use std::time::Duration;

use crate::config_error::ConfigError;

/// Longest duration accepted for any option: one day. Anything longer is
/// almost certainly a unit mistake (seconds vs milliseconds).
pub const MAX_MS: f64 = 86_400_000.0;

/// Shows a number in an error message without pulling float formatting
/// (kilobytes of tables) into the wasm build.
pub fn show(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if v.fract() != 0.0 {
        "a fractional number".into()
    } else if v.abs() < 9e15 {
        (v as i64).to_string()
    } else {
        "a very large number".into()
    }
}

/// Reads a plain decimal (`12`, `1.5`, `.25`; no sign, exponent or
/// words) without pulling the float parser (kilobytes of tables) into the
/// wasm build: what a `Retry-After` of seconds, a "retry in 1.5s" hint or
/// an id echoed as a string holds.
pub fn decimal(text: &str) -> Option<f64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !digits(whole) || !digits(fraction) {
        return None;
    }
    let value = whole.bytes().fold(0.0, |v, b| v * 10.0 + f64::from(b - b'0'));
    let (part, scale) = fraction.bytes().fold((0.0, 1.0), |(v, s), b| (v * 10.0 + f64::from(b - b'0'), s * 10.0));
    Some(value + part / scale)
}

/// A duration given in milliseconds, between `min` and one day.
pub fn millis(field: &str, v: f64, min: f64) -> Result<Duration, ConfigError> {
    if !v.is_finite() || v < min || v > MAX_MS {
        let (min, max, got) = (show(min), show(MAX_MS), show(v));
        return Err(ConfigError::new(
            field,
            format!("must be a number of milliseconds between {min} and {max}, got {got}"),
        ));
    }
    Ok(Duration::from_micros((v * 1000.0) as u64))
}

/// A whole number in `[min, max]`.
pub fn whole(field: &str, v: f64, min: u32, max: u32) -> Result<u32, ConfigError> {
    if !v.is_finite() || v.fract() != 0.0 || v < f64::from(min) || v > f64::from(max) {
        return Err(ConfigError::new(
            field,
            format!("must be a whole number between {min} and {max}, got {}", show(v)),
        ));
    }
    Ok(v as u32)
}

/// A finite number in `[min, max]`.
pub fn bounded(field: &str, v: f64, min: f64, max: f64) -> Result<f64, ConfigError> {
    if !(v.is_finite() && v >= min && v <= max) {
        let (min, max, got) = (show(min), show(max), show(v));
        return Err(ConfigError::new(field, format!("must be a number between {min} and {max}, got {got}")));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_decimal_reads_as_the_float_parser_reads_it() {
        for text in ["0", "7", "12", "1.5", ".25", "3.", "0.001", "250", "86400", "1.125", "007"] {
            assert_eq!(decimal(text), text.parse::<f64>().ok(), "{text}");
        }
        for text in ["", ".", "-1", "+1", "1e3", "inf", "NaN", "1.2.3", " 1", "1 ", "0x10", "1,5"] {
            assert_eq!(decimal(text), None, "{text}");
        }
        assert_eq!(decimal(&"9".repeat(400)), Some(f64::INFINITY), "too many digits: not finite, as the parser says");
    }

    #[test]
    fn limits_are_inclusive_and_refusals_say_the_range_and_the_value() {
        assert_eq!(millis("a", 0.0, 0.0), Ok(Duration::ZERO));
        assert_eq!(millis("a", MAX_MS, 0.0), Ok(Duration::from_secs(86_400)));
        assert_eq!(millis("a", 1.5, 0.0), Ok(Duration::from_micros(1500)));
        let e = millis("a", MAX_MS + 1.0, 1.0).unwrap_err();
        assert_eq!(e.reason(), "must be a number of milliseconds between 1 and 86400000, got 86400001");
        assert!(millis("a", 0.5, 1.0).is_err() && millis("a", f64::NAN, 0.0).is_err());
        assert_eq!(whole("w", 1.0, 1, 3), Ok(1));
        assert_eq!(whole("w", 3.0, 1, 3), Ok(3));
        for bad in [0.0, 4.0, 1.5, f64::INFINITY] {
            assert_eq!(whole("w", bad, 1, 3).unwrap_err().field(), "w");
        }
        assert_eq!(
            whole("w", 2.5, 1, 3).unwrap_err().reason(),
            "must be a whole number between 1 and 3, got a fractional number"
        );
        assert_eq!(bounded("b", -2.0, -2.0, 2.0), Ok(-2.0));
        assert_eq!(bounded("b", 2.0, -2.0, 2.0), Ok(2.0));
        assert_eq!(
            bounded("b", 2.5, -2.0, 2.0).unwrap_err().reason(),
            "must be a number between -2 and 2, got a fractional number"
        );
        assert!(bounded("b", f64::NEG_INFINITY, f64::MIN, 0.0).is_err());
        assert_eq!(show(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(show(f64::INFINITY), "Infinity");
        assert_eq!(show(8_999_999_999_999_999.0), "8999999999999999");
        assert_eq!(show(9e15), "a very large number");
        assert_eq!(show(-9e15), "a very large number");
        assert_eq!(show(-7.0), "-7");
    }
}
