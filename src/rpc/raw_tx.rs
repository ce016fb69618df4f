//! The hash of a signed transaction from the hex a caller broadcast, and
//! the chain it was signed for.
//!
//! A node that already holds a transaction answers "already known" instead
//! of its hash. The hash is the keccak of the signed bytes, so the request
//! layer answers with what a first broadcast would have returned: a caller
//! re-sending the same bytes (after a lost answer) gets its hash, not an
//! error.

use alloy_primitives::{hex, keccak256, B256};

/// The transaction hash of `raw` (`0x`-prefixed hex of the signed bytes),
/// or `None` when it is not hex or empty.
pub fn hash_of_raw_hex(raw: &str) -> Option<B256> {
    match hex::decode(raw.trim()) {
        Ok(bytes) if !bytes.is_empty() => Some(keccak256(bytes)),
        _ => None,
    }
}

/// The chain id `raw` (`0x` hex of signed bytes) was signed for: a typed
/// transaction's first field (EIP-2718: types 1–4 start their RLP list with
/// it), or a legacy one's `v` = 35 + 2 × chain id (EIP-155). `None` for a
/// legacy signature without one (`v` 27/28), or bytes that do not parse:
/// the node judges those.
///
/// Why: a relayer sends each signed transaction to a node of the chain it
/// was signed for. Without `chainId` configured, the first node checked
/// set the chain, and a wrong-chain node listed first got the signed bytes
/// (a new user's finding); a signed transaction says its chain itself.
pub fn signed_chain_id(raw: &str) -> Option<u64> {
    let bytes = hex::decode(raw.trim()).ok()?;
    match *bytes.first()? {
        1..=4 => {
            let (list, _) = rlp_item(&bytes[1..])?;
            let (chain, _) = rlp_item(list.payload()?)?;
            uint(chain.bytes()?)
        }
        0xc0..=0xff => {
            let (list, _) = rlp_item(&bytes)?;
            let mut rest = list.payload()?;
            let mut v = None;
            for _ in 0..7 {
                let (item, tail) = rlp_item(rest)?;
                v = Some(item);
                rest = tail;
            }
            let v = uint(v?.bytes()?)?;
            (v >= 35).then(|| (v - 35) / 2)
        }
        _ => None,
    }
}

/// One RLP item at the start of `input`, and what follows it.
enum Rlp<'a> {
    Bytes(&'a [u8]),
    List(&'a [u8]),
}

impl<'a> Rlp<'a> {
    fn bytes(&self) -> Option<&'a [u8]> {
        match self {
            Rlp::Bytes(b) => Some(b),
            Rlp::List(_) => None,
        }
    }
    fn payload(&self) -> Option<&'a [u8]> {
        match self {
            Rlp::List(b) => Some(b),
            Rlp::Bytes(_) => None,
        }
    }
}

fn rlp_item(input: &[u8]) -> Option<(Rlp<'_>, &[u8])> {
    let first = *input.first()?;
    let long = |len_of_len: usize| -> Option<(usize, usize)> {
        let len_bytes = input.get(1..1 + len_of_len)?;
        let len = uint(len_bytes)?;
        Some((1 + len_of_len, usize::try_from(len).ok()?))
    };
    let (start, len, list) = match first {
        0x00..=0x7f => return Some((Rlp::Bytes(&input[..1]), &input[1..])),
        0x80..=0xb7 => (1, usize::from(first - 0x80), false),
        0xb8..=0xbf => {
            let (s, l) = long(usize::from(first - 0xb7))?;
            (s, l, false)
        }
        0xc0..=0xf7 => (1, usize::from(first - 0xc0), true),
        0xf8..=0xff => {
            let (s, l) = long(usize::from(first - 0xf7))?;
            (s, l, true)
        }
    };
    let end = start.checked_add(len)?;
    let body = input.get(start..end)?;
    Some((if list { Rlp::List(body) } else { Rlp::Bytes(body) }, &input[end..]))
}

/// A big-endian unsigned integer of at most 8 bytes.
fn uint(bytes: &[u8]) -> Option<u64> {
    (bytes.len() <= 8).then(|| bytes.iter().fold(0u64, |n, b| (n << 8) | u64::from(*b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_a_transaction_was_signed_for() {
        // EIP-155's own example: nonce 9, 20 gwei, 21000 gas, chain 1 (v = 37).
        let legacy = "0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83";
        assert_eq!(signed_chain_id(legacy), Some(1));
        // A typed transaction names its chain first: EIP-1559 on chain 31337 (0x7a69), then fields.
        assert_eq!(signed_chain_id("0x02c9827a698080808080808080"), Some(31_337));
        assert_eq!(signed_chain_id("0x01c50580808080"), Some(5));
        // Before EIP-155 (v 27): no chain.
        let pre155 = legacy.replace("8025a0", "801ba0");
        assert_eq!(signed_chain_id(&pre155), None);
        // Broken or hostile bytes: no chain, never a panic.
        for raw in
            ["", "0x", "0xzz", "0x02", "0x02f9ffff", "0xf8", "0x05c0", "0xc0", "0x02c0", "0x02c189ffffffffffffffffff"]
        {
            assert_eq!(signed_chain_id(raw), None, "{raw}");
        }
    }

    #[test]
    fn hashes_the_signed_bytes_and_refuses_what_is_not_hex() {
        // keccak256(0x00), as any Ethereum tool prints it.
        let hash = "0xbc36789e7a1e281436464229828f817d6612f7b477d66591ff96a9e064bcc98a";
        assert_eq!(format!("{:#x}", hash_of_raw_hex("0x00").unwrap()), hash);
        assert_eq!(hash_of_raw_hex(" 0x02f8 "), hash_of_raw_hex("0x02f8"), "surrounding space is ignored");
        assert_eq!(hash_of_raw_hex("0x"), None);
        assert_eq!(hash_of_raw_hex("0xzz"), None);
        assert_eq!(hash_of_raw_hex(""), None);
    }
}
