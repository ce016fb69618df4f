//! The hash of a signed transaction from the hex a caller broadcast.
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

#[cfg(test)]
mod tests {
    use super::*;

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
