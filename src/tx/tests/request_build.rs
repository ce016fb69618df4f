//! Building a request from its fields: the two spellings of data and of
//! the gas limit, a tip as high as the max fee, legacy and EIP-1559 fees,
//! and the `type` field against the fees given.

use crate::tx::fees::Fees;
use crate::tx::request::{build, FieldValue, TxFieldError, TxRequest};

const TO: &str = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";

fn text(s: &str) -> FieldValue {
    FieldValue::Text(s.into())
}

/// `build` on chain 1 with a recipient and `extra`.
fn with(extra: &[(&str, FieldValue)]) -> Result<TxRequest, TxFieldError> {
    let mut fields = vec![("to".to_string(), text(TO))];
    fields.extend(extra.iter().map(|(n, v)| (n.to_string(), v.clone())));
    build(&fields, Some(1))
}

#[test]
fn calldata_may_be_given_as_input_and_the_gas_limit_as_gas() {
    let request = with(&[("input", text("0x6000")), ("gas", FieldValue::Number(50_000.0))]).unwrap();
    assert_eq!(request.data, vec![0x60, 0x00]);
    assert_eq!(request.gas, Some(50_000));
    let request = with(&[("data", text("0xab")), ("gasLimit", text("0x5208"))]).unwrap();
    assert_eq!((request.data, request.gas), (vec![0xab], Some(21_000)));
    let neither = with(&[]).unwrap();
    assert_eq!((neither.data, neither.gas), (vec![], None));
    assert_eq!(with(&[("data", text("0x")), ("input", text("0x"))]).unwrap_err().field, "input");
    assert_eq!(with(&[("gas", text("1")), ("gasLimit", text("1"))]).unwrap_err().field, "gasLimit");
}

#[test]
fn a_tip_may_equal_the_max_fee_but_not_exceed_it() {
    let equal = with(&[("maxFeePerGas", text("7")), ("maxPriorityFeePerGas", text("7"))]).unwrap();
    assert_eq!(equal.given_fees(), Some(Fees::Eip1559 { max_fee: 7, tip: 7 }));
    let above = with(&[("maxFeePerGas", text("7")), ("maxPriorityFeePerGas", text("8"))]).unwrap_err();
    assert_eq!((above.field.as_str(), above.reason.as_str()), ("maxPriorityFeePerGas", "is above maxFeePerGas"));
}

#[test]
fn a_gas_price_makes_a_legacy_request_whose_fees_are_complete() {
    let legacy = with(&[("gasPrice", text("0x3b9aca00"))]).unwrap();
    assert!(legacy.is_legacy());
    assert_eq!(legacy.given_fees(), Some(Fees::Legacy { gas_price: 1_000_000_000 }));
    let eip1559 = with(&[("maxFeePerGas", text("9"))]).unwrap();
    assert!(!eip1559.is_legacy());
    assert_eq!(eip1559.given_fees(), None, "the tip is estimated later");
}

#[test]
fn type_0_goes_with_a_gas_price_or_no_fees_and_is_refused_with_eip_1559_fees() {
    let legacy = with(&[("type", FieldValue::Number(0.0)), ("gasPrice", text("5"))]).unwrap();
    assert_eq!(legacy.given_fees(), Some(Fees::Legacy { gas_price: 5 }));
    assert!(with(&[("type", text("0x0"))]).is_ok(), "no fees given: nothing contradicts type 0");
    let refused = "is 0 (legacy) but EIP-1559 fees were given";
    for fees in [
        vec![("maxFeePerGas", text("9"))],
        vec![("maxPriorityFeePerGas", text("1"))],
        vec![("maxFeePerGas", text("9")), ("maxPriorityFeePerGas", text("1"))],
    ] {
        let mut fields = vec![("type", FieldValue::Number(0.0))];
        fields.extend(fees);
        let error = with(&fields).unwrap_err();
        assert_eq!((error.field.as_str(), error.reason.as_str()), ("type", refused), "{fields:?}");
    }
}

#[test]
fn type_2_goes_with_eip_1559_fees_or_no_fees_and_is_refused_with_a_gas_price() {
    let eip1559 =
        with(&[("type", text("2")), ("maxFeePerGas", text("9")), ("maxPriorityFeePerGas", text("1"))]).unwrap();
    assert_eq!(eip1559.given_fees(), Some(Fees::Eip1559 { max_fee: 9, tip: 1 }));
    assert!(with(&[("type", FieldValue::BigInt("2".into()))]).is_ok());
    let error = with(&[("type", FieldValue::Number(2.0)), ("gasPrice", text("5"))]).unwrap_err();
    assert_eq!((error.field.as_str(), error.reason.as_str()), ("type", "is 2 (EIP-1559) but gasPrice was given"));
    let error = with(&[("type", FieldValue::Number(1.0))]).unwrap_err();
    assert_eq!((error.field.as_str(), error.reason.as_str()), ("type", "must be 0 (legacy) or 2 (EIP-1559)"));
}
