//! A transaction request, validated before anything is signed or sent.
//!
//! Why strict: a float fee (`1.5e9`), a negative value or a typo'd field
//! name (`maxFeePerGass`) silently "fixed" by a library ends up signed. Each
//! field here is parsed exactly, and an error names the field and says why.

use alloy_primitives::{hex, Address, U256};
use thiserror::Error;

use super::fees::Fees;

/// A field as the JS side delivered it.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldValue {
    /// Missing, `undefined` or `null`.
    Absent,
    /// A string (hex `0x…` or decimal for numbers).
    Text(String),
    /// A JS number.
    Number(f64),
    /// A JS bigint, as its decimal text.
    BigInt(String),
    /// A boolean (only options take one).
    Bool(bool),
    /// Anything else (an object, a boolean…), described for the error.
    Other(&'static str),
}

/// A bad field, named.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("transaction field `{field}` {reason}")]
pub struct TxFieldError {
    /// The field's name as the caller spelled it.
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

fn bad(field: &str, reason: impl Into<String>) -> TxFieldError {
    TxFieldError { field: field.to_string(), reason: reason.into() }
}

/// The fields a request may carry; anything else is refused as a likely typo.
pub const KNOWN_FIELDS: &[&str] = &[
    "to",
    "from",
    "value",
    "data",
    "input",
    "gas",
    "gasLimit",
    "maxFeePerGas",
    "maxPriorityFeePerGas",
    "gasPrice",
    "chainId",
    "type",
    "nonce",
    "accessList",
];

/// A validated request. Fees the caller left out are estimated later.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxRequest {
    /// Recipient; `None` deploys a contract.
    pub to: Option<Address>,
    /// Wei sent.
    pub value: U256,
    /// Calldata.
    pub data: Vec<u8>,
    /// Gas limit, estimated when absent.
    pub gas: Option<u64>,
    /// `maxFeePerGas` as given.
    pub max_fee: Option<u128>,
    /// `maxPriorityFeePerGas` as given.
    pub tip: Option<u128>,
    /// `gasPrice` as given: makes the transaction legacy.
    pub gas_price: Option<u128>,
    /// The chain the signature is bound to.
    pub chain_id: u64,
    /// `from`, when given (must match the signer).
    pub from: Option<Address>,
}

impl TxRequest {
    /// Whether the caller asked for a legacy transaction.
    pub fn is_legacy(&self) -> bool {
        self.gas_price.is_some()
    }

    /// The fees the caller fixed, if complete.
    pub fn given_fees(&self) -> Option<Fees> {
        match (self.gas_price, self.max_fee, self.tip) {
            (Some(gas_price), _, _) => Some(Fees::Legacy { gas_price }),
            (None, Some(max_fee), Some(tip)) => Some(Fees::Eip1559 { max_fee, tip }),
            _ => None,
        }
    }
}

/// Parses an unsigned integer field of at most `bits` bits.
pub fn parse_uint(field: &str, value: &FieldValue, bits: usize) -> Result<Option<U256>, TxFieldError> {
    let parsed = match value {
        FieldValue::Absent => return Ok(None),
        FieldValue::Number(n) => {
            if !n.is_finite() || n.fract() != 0.0 {
                return Err(bad(field, "must be a whole number (fees and values are integers in wei)"));
            }
            if *n < 0.0 {
                return Err(bad(field, "must not be negative"));
            }
            if *n > 9_007_199_254_740_991.0 {
                return Err(bad(
                    field,
                    "is above 2^53 as a JS number and has lost precision; pass a bigint or a hex string",
                ));
            }
            U256::from(*n as u64)
        }
        FieldValue::BigInt(text) | FieldValue::Text(text) => {
            let text = text.trim();
            if text.starts_with('-') {
                return Err(bad(field, "must not be negative"));
            }
            let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                Some(hex) if !hex.is_empty() && hex.len() <= 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    U256::from_str_radix(hex, 16).ok()
                }
                Some(_) => None,
                None if !text.is_empty() && text.len() <= 78 && text.bytes().all(|b| b.is_ascii_digit()) => {
                    U256::from_str_radix(text, 10).ok()
                }
                None => None,
            };
            parsed.ok_or_else(|| {
                bad(field, "must be a non-negative integer (a bigint, a safe integer, a 0x hex or decimal string)")
            })?
        }
        FieldValue::Other(kind) => return Err(bad(field, format!("must be a number, bigint or string, got {kind}"))),
        FieldValue::Bool(_) => return Err(bad(field, "must be a number, bigint or string, got a boolean")),
    };
    if parsed.bit_len() > bits {
        return Err(bad(field, format!("does not fit in {bits} bits")));
    }
    Ok(Some(parsed))
}

fn uint64(field: &str, value: &FieldValue) -> Result<Option<u64>, TxFieldError> {
    Ok(parse_uint(field, value, 64)?.map(|v| v.saturating_to::<u64>()))
}

fn uint128(field: &str, value: &FieldValue) -> Result<Option<u128>, TxFieldError> {
    Ok(parse_uint(field, value, 128)?.map(|v| v.saturating_to::<u128>()))
}

/// Parses a `0x` address; mixed case must be a valid EIP-55 checksum.
pub fn parse_address(field: &str, value: &FieldValue) -> Result<Option<Address>, TxFieldError> {
    let text = match value {
        FieldValue::Absent => return Ok(None),
        FieldValue::Text(t) => t.trim(),
        _ => return Err(bad(field, "must be a 0x-prefixed 20-byte hex string")),
    };
    let Some(digits) = text.strip_prefix("0x") else {
        return Err(bad(field, "must be a 0x-prefixed 20-byte hex string"));
    };
    if digits.len() != 40 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad(field, "must be a 0x-prefixed 20-byte hex string"));
    }
    let mixed = digits.bytes().any(|b| b.is_ascii_lowercase()) && digits.bytes().any(|b| b.is_ascii_uppercase());
    if mixed && !eip55_checksum_holds(digits) {
        return Err(bad(field, "has mixed case but an invalid EIP-55 checksum (a typo?)"));
    }
    let mut bytes = [0u8; 20];
    hex::decode_to_slice(digits, &mut bytes).map_err(|_| bad(field, "is not valid hex"))?;
    Ok(Some(Address::from(bytes)))
}

/// EIP-55: each letter of an address's 40 hex digits is upper case exactly
/// when the same nibble of keccak256(the digits in lower case) is 8 or more.
/// Checked here rather than by alloy's `parse_checksummed`, whose error
/// types bring hex errors' `Debug` (and with it char escaping and Unicode's
/// tables) into the module every page loads (src/text.rs).
fn eip55_checksum_holds(digits: &str) -> bool {
    let lower = digits.to_ascii_lowercase();
    let hash = alloy_primitives::keccak256(lower.as_bytes());
    digits.bytes().enumerate().all(|(i, b)| {
        let nibble = (hash[i / 2] >> if i % 2 == 0 { 4 } else { 0 }) & 15;
        !b.is_ascii_alphabetic() || b.is_ascii_uppercase() == (nibble >= 8)
    })
}

/// Parses `0x` hex data (empty allowed).
pub fn parse_data(field: &str, value: &FieldValue) -> Result<Vec<u8>, TxFieldError> {
    match value {
        FieldValue::Absent => Ok(Vec::new()),
        FieldValue::Text(t) => {
            let digits = t.trim().strip_prefix("0x").ok_or_else(|| bad(field, "must be 0x-prefixed hex"))?;
            hex::decode(digits).map_err(|_| bad(field, "must be 0x-prefixed hex with an even number of digits"))
        }
        _ => Err(bad(field, "must be 0x-prefixed hex")),
    }
}

/// Builds a request from named fields. `default_chain` is the chain the
/// relayer signs for (its `chainId` option, or the chain its endpoints
/// verified): used when the request has none, and a request naming
/// another chain is refused.
pub fn build(fields: &[(String, FieldValue)], default_chain: Option<u64>) -> Result<TxRequest, TxFieldError> {
    if let Some((name, _)) = fields.iter().find(|(n, _)| !KNOWN_FIELDS.contains(&n.as_str())) {
        let shown = if name.is_empty() { "(empty key)" } else { name.as_str() };
        let hint = crate::input::nearest(name, KNOWN_FIELDS).map_or(String::new(), |n| format!(" did you mean `{n}`?"));
        return Err(bad(shown, format!("is not a transaction field (a typo?{hint})")));
    }
    let get = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or(FieldValue::Absent);
    if get("nonce") != FieldValue::Absent {
        return Err(bad("nonce", "is managed by the relayer (per account, never reused); leave it out"));
    }
    match get("accessList") {
        FieldValue::Absent => {}
        _ => return Err(bad("accessList", "is not supported yet")),
    }
    let data = match (get("data"), get("input")) {
        (FieldValue::Absent, input) => parse_data("input", &input)?,
        (data, FieldValue::Absent) => parse_data("data", &data)?,
        _ => return Err(bad("input", "conflicts with `data`; give one of them")),
    };
    let gas = match (get("gas"), get("gasLimit")) {
        (FieldValue::Absent, limit) => uint64("gasLimit", &limit)?,
        (gas, FieldValue::Absent) => uint64("gas", &gas)?,
        _ => return Err(bad("gasLimit", "conflicts with `gas`; give one of them")),
    };
    let gas_price = uint128("gasPrice", &get("gasPrice"))?;
    let max_fee = uint128("maxFeePerGas", &get("maxFeePerGas"))?;
    let tip = uint128("maxPriorityFeePerGas", &get("maxPriorityFeePerGas"))?;
    if gas_price.is_some() && (max_fee.is_some() || tip.is_some()) {
        return Err(bad("gasPrice", "cannot be combined with maxFeePerGas / maxPriorityFeePerGas"));
    }
    if let (Some(m), Some(t)) = (max_fee, tip) {
        if t > m {
            return Err(bad("maxPriorityFeePerGas", "is above maxFeePerGas"));
        }
    }
    match get("type") {
        FieldValue::Absent => {}
        kind => {
            let t = uint64("type", &kind)?;
            let legacy = gas_price.is_some();
            match t {
                Some(0) if !legacy && (max_fee.is_some() || tip.is_some()) => {
                    return Err(bad("type", "is 0 (legacy) but EIP-1559 fees were given"))
                }
                Some(2) if legacy => return Err(bad("type", "is 2 (EIP-1559) but gasPrice was given")),
                Some(0) | Some(2) => {}
                _ => return Err(bad("type", "must be 0 (legacy) or 2 (EIP-1559)")),
            }
        }
    }
    let given_chain = uint64("chainId", &get("chainId"))?;
    if let (Some(given), Some(relayer)) = (given_chain, default_chain) {
        if given != relayer {
            return Err(bad(
                "chainId",
                format!(
                    "is {given}, but the relayer serves chain {relayer}; a signature for another chain is never made"
                ),
            ));
        }
    }
    let chain_id = given_chain.or(default_chain).ok_or_else(|| {
        bad("chainId", "is missing (set it on the request or the relayer's `chainId` option); a signature must be bound to a chain")
    })?;
    if chain_id == 0 {
        return Err(bad("chainId", "must not be 0"));
    }
    let to = parse_address("to", &get("to"))?;
    let from = parse_address("from", &get("from"))?;
    let value = parse_uint("value", &get("value"), 256)?.unwrap_or_default();
    if to.is_none() && data.is_empty() {
        return Err(bad(
            "to",
            "is missing and there is no data: that would create an empty contract and burn the value (give `to`, or `data` to deploy)",
        ));
    }
    Ok(TxRequest { to, from, value, data, gas, max_fee, tip, gas_price, chain_id })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> FieldValue {
        FieldValue::Text(s.into())
    }

    fn fields(list: &[(&str, FieldValue)]) -> Vec<(String, FieldValue)> {
        list.iter().map(|(n, v)| (n.to_string(), v.clone())).collect()
    }

    fn field_of(list: &[(&str, FieldValue)], chain: Option<u64>) -> String {
        build(&fields(list), chain).unwrap_err().field
    }

    #[test]
    fn an_unknown_field_is_refused_with_the_one_it_most_likely_meant() {
        let e = build(&fields(&[("maxFeePerGass", text("0x1"))]), Some(1)).unwrap_err();
        assert_eq!(e.field, "maxFeePerGass");
        assert!(e.reason.contains("did you mean `maxFeePerGas`?"), "{}", e.reason);
        let far = build(&fields(&[("colour", text("0x1"))]), Some(1)).unwrap_err();
        assert_eq!(far.reason, "is not a transaction field (a typo?)");
    }

    #[test]
    fn a_complete_request_parses_every_spelling_of_a_number() {
        let request = build(
            &fields(&[
                ("to", text("0x70997970c51812dc3a010c7d01b50e0d17dc79c8")),
                ("value", FieldValue::BigInt("1000000000000000000".into())),
                ("gasLimit", FieldValue::Number(21000.0)),
                ("maxFeePerGas", text("0x77359400")),
                ("maxPriorityFeePerGas", text("1000000000")),
                ("chainId", FieldValue::Number(31337.0)),
            ]),
            None,
        )
        .unwrap();
        assert_eq!(request.value, U256::from(10u64.pow(18)));
        assert_eq!(request.gas, Some(21000));
        assert_eq!(request.given_fees(), Some(Fees::Eip1559 { max_fee: 2_000_000_000, tip: 1_000_000_000 }));
        assert_eq!(request.chain_id, 31337);
    }

    #[test]
    fn bad_fields_are_named() {
        let chain = Some(1);
        assert_eq!(field_of(&[("value", FieldValue::BigInt("-1".into()))], chain), "value");
        assert_eq!(field_of(&[("value", FieldValue::Number(-3.0))], chain), "value");
        assert_eq!(field_of(&[("to", text("0x1234"))], chain), "to");
        assert_eq!(field_of(&[("to", text("0x70997970C51812dc3A010C7d01b50e0d17dc79c9"))], chain), "to");
        assert_eq!(field_of(&[("maxFeePerGas", FieldValue::Number(1.5e9 + 0.5))], chain), "maxFeePerGas");
        assert_eq!(field_of(&[("gasPrice", FieldValue::Number(1e30))], chain), "gasPrice");
        assert_eq!(field_of(&[("maxFeePerGass", text("1"))], chain), "maxFeePerGass");
        assert_eq!(field_of(&[("", text("1"))], chain), "(empty key)", "found by fuzzing: an empty key is named");
        assert_eq!(field_of(&[("to", text("0x70997970c51812dc3a010c7d01b50e0d17dc79c8"))], None), "chainId");
        assert_eq!(field_of(&[("nonce", FieldValue::Number(1.0))], chain), "nonce");
        assert_eq!(field_of(&[("data", text("0xabc"))], chain), "data");
        assert_eq!(field_of(&[("gasPrice", text("1")), ("maxFeePerGas", text("2"))], chain), "gasPrice");
        assert_eq!(
            field_of(&[("maxFeePerGas", text("1")), ("maxPriorityFeePerGas", text("2"))], chain),
            "maxPriorityFeePerGas"
        );
        assert_eq!(field_of(&[("value", FieldValue::Other("object"))], chain), "value");
        assert_eq!(field_of(&[("type", FieldValue::Number(3.0))], chain), "type");
        assert_eq!(field_of(&[("value", text(&format!("0x1{}", "0".repeat(64))))], chain), "value");
        assert_eq!(field_of(&[("value", text("1"))], chain), "to", "no `to` and no data: an empty contract");
        assert_eq!(
            field_of(&[("to", text("0x70997970c51812dc3a010c7d01b50e0d17dc79c8")), ("chainId", text("5"))], chain),
            "chainId"
        );
        assert!(build(&fields(&[("data", text("0x6000"))]), chain).is_ok(), "a deployment has data");
    }

    #[test]
    fn the_eip55_check_agrees_with_alloys_checksum() {
        for i in 0u32..64 {
            let address = Address::from_slice(&alloy_primitives::keccak256(i.to_be_bytes())[12..]);
            let checksummed = address.to_checksum(None);
            let digits = &checksummed[2..];
            assert!(eip55_checksum_holds(digits), "{checksummed}");
            if let Some(at) = digits.bytes().position(|b| b.is_ascii_alphabetic()) {
                let mut flipped = digits.to_string().into_bytes();
                flipped[at] ^= 0x20; // the other case
                let flipped = String::from_utf8(flipped).unwrap();
                assert!(!eip55_checksum_holds(&flipped), "{flipped} is not {checksummed}");
            }
        }
    }

    #[test]
    fn a_checksummed_address_and_the_relayers_chain_are_accepted() {
        let request =
            build(&fields(&[("to", text("0x70997970C51812dc3A010C7d01b50e0d17dc79C8"))]), Some(31337)).unwrap();
        assert_eq!(request.chain_id, 31337);
        assert!(request.to.is_some());
        assert!(!request.is_legacy());
    }
}
