//! Request fields as numbers and addresses: the bounds of a JS number and
//! of a field's bits, digits and nothing else in a hex or decimal string
//! (the parser underneath would skip `_` and read an empty string as 0),
//! and the shape of an address.

use alloy_primitives::U256;

use crate::tx::request::{parse_address, parse_uint, FieldValue, TxFieldError};

fn text(s: &str) -> FieldValue {
    FieldValue::Text(s.into())
}

fn reason(result: Result<impl std::fmt::Debug, TxFieldError>) -> String {
    result.unwrap_err().reason
}

const NOT_AN_INTEGER: &str = "must be a non-negative integer (a bigint, a safe integer, a 0x hex or decimal string)";

#[test]
fn a_js_number_is_taken_up_to_the_largest_safe_integer_and_refused_above() {
    let largest_safe = FieldValue::Number(9_007_199_254_740_991.0);
    assert_eq!(parse_uint("value", &largest_safe, 256), Ok(Some(U256::from(9_007_199_254_740_991u64))));
    assert_eq!(
        reason(parse_uint("value", &FieldValue::Number(9_007_199_254_740_992.0), 256)),
        "is above 2^53 as a JS number and has lost precision; pass a bigint or a hex string"
    );
}

#[test]
fn a_hex_string_needs_one_to_sixty_four_hex_digits_and_nothing_else() {
    assert_eq!(parse_uint("value", &text("0xff"), 256), Ok(Some(U256::from(255u64))));
    assert_eq!(parse_uint("value", &text("0X10"), 256), Ok(Some(U256::from(16u64))));
    let sixty_four = format!("0x{}1", "0".repeat(63));
    assert_eq!(parse_uint("value", &text(&sixty_four), 256), Ok(Some(U256::from(1u64))));
    for refused in ["0x", "0x1_0", "0x_", "0xg1"] {
        assert_eq!(reason(parse_uint("value", &text(refused), 256)), NOT_AN_INTEGER, "{refused:?}");
    }
    let sixty_five = format!("0x{}1", "0".repeat(64));
    assert_eq!(reason(parse_uint("value", &text(&sixty_five), 256)), NOT_AN_INTEGER, "65 digits, even as zeros");
}

#[test]
fn a_decimal_string_or_bigint_needs_one_to_seventy_eight_digits_and_nothing_else() {
    assert_eq!(parse_uint("value", &FieldValue::BigInt("1000".into()), 256), Ok(Some(U256::from(1000u64))));
    let seventy_eight = format!("{}7", "0".repeat(77));
    assert_eq!(parse_uint("value", &text(&seventy_eight), 256), Ok(Some(U256::from(7u64))));
    for refused in ["", "  ", "1_000", "_", "1e9", "+5"] {
        assert_eq!(reason(parse_uint("value", &text(refused), 256)), NOT_AN_INTEGER, "{refused:?}");
    }
    assert_eq!(reason(parse_uint("value", &FieldValue::BigInt("1_000".into()), 256)), NOT_AN_INTEGER);
    let seventy_nine = format!("{}7", "0".repeat(78));
    assert_eq!(reason(parse_uint("value", &text(&seventy_nine), 256)), NOT_AN_INTEGER, "79 digits, even as zeros");
}

#[test]
fn a_field_takes_every_value_of_its_bits_and_none_beyond() {
    let max_u64 = text("0xffffffffffffffff");
    assert_eq!(parse_uint("gas", &max_u64, 64), Ok(Some(U256::from(u64::MAX))));
    assert_eq!(reason(parse_uint("gas", &text("0x10000000000000000"), 64)), "does not fit in 64 bits");
    let max_u128 = FieldValue::BigInt(u128::MAX.to_string());
    assert_eq!(parse_uint("maxFeePerGas", &max_u128, 128), Ok(Some(U256::from(u128::MAX))));
    let above = FieldValue::BigInt((U256::from(u128::MAX) + U256::from(1u64)).to_string());
    assert_eq!(reason(parse_uint("maxFeePerGas", &above, 128)), "does not fit in 128 bits");
}

#[test]
fn an_address_is_forty_hex_digits_after_0x_and_a_wrong_length_or_digit_says_so() {
    let shape = "must be a 0x-prefixed 20-byte hex string";
    assert_eq!(reason(parse_address("to", &text("0x1234"))), shape, "too short, every digit hex");
    let bad_digit = format!("0x{}g", "7".repeat(39));
    assert_eq!(reason(parse_address("to", &text(&bad_digit))), shape, "forty digits, one not hex");
    assert_eq!(reason(parse_address("to", &text(&format!("0x{}", "7".repeat(41))))), shape);
    let lower = format!("0x{}", "ab".repeat(20));
    assert_eq!(parse_address("to", &text(&lower)), Ok(Some(alloy_primitives::Address::repeat_byte(0xab))));
}
