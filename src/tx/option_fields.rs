//! The `transactions` relayer option and the per-call `options` of
//! `sendTransaction` / `sendRawTransaction`: named fields applied over a
//! base, each range checked here once, every error naming the field
//! (`transactions.bumpPercent`, `options.feeCeiling`).

use std::time::Duration;

use super::request::{parse_uint, FieldValue, TxFieldError};
use super::TxOptions;

/// The option names, for typo hints.
const NAMES: [&str; 6] =
    ["pollIntervalMs", "bumpPercent", "feeCeiling", "confirmations", "rebroadcastEveryPolls", "repairGaps"];

/// Longest poll interval accepted (one day).
const MAX_POLL_MS: u64 = 86_400_000;

impl TxOptions {
    /// These options with `fields` applied; `path` is the option's own
    /// name, used in errors. Absent fields keep the base value.
    pub fn with_fields(self, path: &str, fields: &[(String, FieldValue)]) -> Result<TxOptions, TxFieldError> {
        let mut o = self;
        for (key, value) in fields {
            if *value == FieldValue::Absent {
                continue;
            }
            let field = format!("{path}.{key}");
            let err = |why: &str| TxFieldError { field: field.clone(), reason: why.into() };
            let int = |max: u64| -> Result<u64, TxFieldError> {
                let n = parse_uint(&field, value, 64)?.map_or(0, |n| n.saturating_to::<u64>());
                if n > max {
                    return Err(err("is too large"));
                }
                Ok(n)
            };
            match key.as_str() {
                "pollIntervalMs" => o.poll_interval = Duration::from_millis(int(MAX_POLL_MS)?.max(1)),
                "bumpPercent" => {
                    let percent = int(1000)?;
                    if percent < 10 {
                        return Err(err("must be at least 10 (nodes refuse smaller replacements)"));
                    }
                    o.bump_percent = percent as u32;
                }
                "feeCeiling" => o.fee_ceiling = parse_uint(&field, value, 128)?.map(|n| n.saturating_to::<u128>()),
                "confirmations" => o.confirmations = int(1000)?.max(1),
                "rebroadcastEveryPolls" => o.rebroadcast_every = int(1000)?.max(1) as u32,
                "repairGaps" => match value {
                    FieldValue::Bool(on) => o.repair_gaps = *on,
                    _ => return Err(err("must be a boolean")),
                },
                _ => {
                    let hint =
                        crate::input::nearest(key, &NAMES).map_or(String::new(), |n| format!(" did you mean `{n}`?"));
                    return Err(err(&format!("is not a transaction option (a typo?{hint})")));
                }
            }
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(fields: &[(&str, FieldValue)]) -> Result<TxOptions, TxFieldError> {
        let fields: Vec<(String, FieldValue)> = fields.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        TxOptions::default().with_fields("transactions", &fields)
    }

    fn field_of(fields: &[(&str, FieldValue)]) -> String {
        apply(fields).expect_err("refused").field
    }

    #[test]
    fn fields_apply_over_the_base_and_absent_ones_keep_it() {
        let o = apply(&[
            ("pollIntervalMs", FieldValue::Number(250.0)),
            ("bumpPercent", FieldValue::Text("25".into())),
            ("feeCeiling", FieldValue::BigInt("100000000000000000000".into())),
            ("confirmations", FieldValue::Number(0.0)),
            ("rebroadcastEveryPolls", FieldValue::Number(3.0)),
            ("repairGaps", FieldValue::Bool(false)),
            ("maxWaitBlocks", FieldValue::Absent),
        ])
        .unwrap();
        assert_eq!(o.poll_interval, Duration::from_millis(250));
        assert_eq!((o.bump_percent, o.confirmations, o.rebroadcast_every), (25, 1, 3), "confirmations at least 1");
        assert_eq!(o.fee_ceiling, Some(100_000_000_000_000_000_000));
        assert!(!o.repair_gaps);
        assert_eq!(o.max_wait_blocks, TxOptions::default().max_wait_blocks);
        assert_eq!(
            apply(&[("pollIntervalMs", FieldValue::Number(0.0))]).unwrap().poll_interval,
            Duration::from_millis(1)
        );
    }

    #[test]
    fn bad_fields_are_named_with_their_path() {
        assert_eq!(field_of(&[("bumpPercent", FieldValue::Number(9.0))]), "transactions.bumpPercent");
        assert!(apply(&[("bumpPercent", FieldValue::Number(10.0))]).is_ok());
        assert_eq!(field_of(&[("bumpPercent", FieldValue::Number(1001.0))]), "transactions.bumpPercent");
        assert_eq!(field_of(&[("pollIntervalMs", FieldValue::Number(86_400_001.0))]), "transactions.pollIntervalMs");
        assert!(apply(&[("pollIntervalMs", FieldValue::Number(86_400_000.0))]).is_ok());
        assert_eq!(field_of(&[("confirmations", FieldValue::Number(1001.0))]), "transactions.confirmations");
        assert_eq!(
            field_of(&[("rebroadcastEveryPolls", FieldValue::Number(-1.0))]),
            "transactions.rebroadcastEveryPolls"
        );
        assert_eq!(field_of(&[("feeCeiling", FieldValue::Other("an object"))]), "transactions.feeCeiling");
        let not_bool = apply(&[("repairGaps", FieldValue::Text("yes".into()))]).expect_err("a string");
        assert_eq!(
            (not_bool.field.as_str(), not_bool.reason.as_str()),
            ("transactions.repairGaps", "must be a boolean")
        );
        let typo = apply(&[("bumpPercnt", FieldValue::Number(20.0))]).expect_err("unknown");
        assert_eq!(typo.field, "transactions.bumpPercnt");
        assert!(typo.reason.contains("typo"));
        assert!(typo.reason.contains("did you mean `bumpPercent`?"), "{}", typo.reason);
        let far = apply(&[("colour", FieldValue::Number(1.0))]).expect_err("unknown");
        assert_eq!(far.reason, "is not a transaction option (a typo?)", "nothing near: no guess");
    }
}
