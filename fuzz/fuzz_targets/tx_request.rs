//! Arbitrary transaction request fields: either a typed error naming a
//! field, or a request whose fees are consistent; and any fee history
//! gives a replacement that clears every client's bump rule or a typed
//! "at the ceiling".
#![no_main]
use breakwater_rpc::tx::fees::{self, Fees};
use breakwater_rpc::tx::request::{build, FieldValue, KNOWN_FIELDS};
use libfuzzer_sys::{arbitrary, fuzz_target};

#[derive(arbitrary::Arbitrary, Debug)]
enum Value {
    Absent,
    Text(String),
    Number(f64),
    BigInt(String),
    Other,
}

#[derive(arbitrary::Arbitrary, Debug)]
struct Input {
    fields: Vec<(u8, Value)>,
    unknown: Option<String>,
    chain: Option<u64>,
    old: (u128, u128),
    network: Option<(u128, u128)>,
    bump: u32,
    ceiling: Option<u128>,
}

fuzz_target!(|input: Input| {
    let mut fields: Vec<(String, FieldValue)> = input
        .fields
        .into_iter()
        .take(16)
        .map(|(i, v)| {
            let name = KNOWN_FIELDS[i as usize % KNOWN_FIELDS.len()].to_string();
            let value = match v {
                Value::Absent => FieldValue::Absent,
                Value::Text(t) => FieldValue::Text(t),
                Value::Number(n) => FieldValue::Number(n),
                Value::BigInt(b) => FieldValue::BigInt(b),
                Value::Other => FieldValue::Other("an object"),
            };
            (name, value)
        })
        .collect();
    if let Some(name) = input.unknown {
        fields.push((name, FieldValue::Absent));
    }
    match build(&fields, input.chain) {
        Ok(request) => {
            assert!(request.chain_id != 0);
            if let (Some(max), Some(tip)) = (request.max_fee, request.tip) {
                assert!(tip <= max);
            }
            assert!(!(request.gas_price.is_some() && request.max_fee.is_some()));
        }
        Err(e) => assert!(!e.field.is_empty()),
    }
    let (max_fee, tip) = (input.old.0 >> 8, (input.old.1 >> 8).min(input.old.0 >> 8));
    let network = input.network.map(|(m, t)| Fees::Eip1559 { max_fee: m >> 8, tip: (t >> 8).min(m >> 8) });
    let bump = 10 + input.bump % 500;
    match fees::replacement(Fees::Eip1559 { max_fee, tip }, network, bump, input.ceiling) {
        Ok(Fees::Eip1559 { max_fee: m, tip: t }) => {
            assert!(m > max_fee && t > tip && t <= m);
            assert!(m >= max_fee / 10 * 11 && t >= tip / 10 * 11);
            if let Some(c) = input.ceiling {
                assert!(m <= c);
            }
        }
        Ok(Fees::Legacy { .. }) => panic!("an EIP-1559 transaction was replaced by a legacy one"),
        Err(_) => {}
    }
});
