//! The pending-transaction journal's record: what a worker writes for a
//! nonce before its first broadcast (and again before each replacement's),
//! so that another worker, or the same one restarted, can finish it.
//!
//! Why: a worker killed between broadcast and inclusion took the only copy
//! of the signed bytes and the hashes to watch with it; the nonce stayed
//! live in the fleet's book forever and nobody re-broadcast, watched or
//! sped it up. The record holds everything that needs: the transaction a
//! speed-up re-signs (`template`) and every transaction signed for the
//! nonce (`sent`: hash, fees, kind, bytes). Never a key.
//!
//! The text form is versioned (`j1|…`) and self-checking: a hash that is
//! not the keccak of its bytes, a field that does not parse, or another
//! version is refused (`JournalError`), so a record from a newer worker or
//! a tampered store is never driven on a guess.
//!
//! ```text
//!   j1|chain|from|nonce|to or -|value|data|gas|fees|tx;tx;…
//!   fees = e:maxFee:tip | l:gasPrice        (decimal wei)
//!   tx   = kind,fees,hash,raw               (kind o|s|c; hex without 0x; raw empty: a wallet sent it)
//! ```

use std::rc::Rc;

use alloy_primitives::{hex, Address, B256, U256};
use thiserror::Error;

use super::engine::tx_hash;
use super::fees::Fees;
use super::slot::{SentTx, TxKind};
use super::UnsignedTx;

const VERSION: &str = "j1";

/// One nonce's journal record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalEntry {
    /// The caller's transaction (its nonce is the record's).
    pub template: UnsignedTx,
    /// Every transaction signed for the nonce, oldest first.
    pub sent: Vec<SentTx>,
}

/// A record that cannot be driven.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("journal record refused: {0}")]
pub struct JournalError(pub String);

fn fees_text(fees: Fees) -> String {
    match fees {
        Fees::Eip1559 { max_fee, tip } => format!("e:{max_fee}:{tip}"),
        Fees::Legacy { gas_price } => format!("l:{gas_price}"),
    }
}

fn kind_text(kind: TxKind) -> &'static str {
    match kind {
        TxKind::Original => "o",
        TxKind::SpeedUp => "s",
        TxKind::Cancel => "c",
    }
}

impl JournalEntry {
    /// The record's text (what the store keeps).
    pub fn encode(&self) -> String {
        let t = &self.template;
        let to = t.to.map_or_else(|| "-".to_owned(), |a| hex::encode(a.as_slice()));
        let sent: Vec<String> = self
            .sent
            .iter()
            .map(|s| {
                format!("{},{},{},{}", kind_text(s.kind), fees_text(s.fees), hex::encode(s.hash), hex::encode(&s.raw))
            })
            .collect();
        format!(
            "{VERSION}|{}|{}|{}|{to}|{:x}|{}|{}|{}|{}",
            t.chain_id,
            hex::encode(t.from.as_slice()),
            t.nonce,
            t.value,
            hex::encode(&t.data),
            t.gas,
            fees_text(t.fees),
            sent.join(";")
        )
    }

    /// Reads a record, checking every field and every hash.
    pub fn decode(text: &str) -> Result<Self, JournalError> {
        let bad = |what: &str| JournalError(what.to_owned());
        let parts: Vec<&str> = text.split('|').collect();
        if parts.first() != Some(&VERSION) {
            return Err(bad("not a j1 record"));
        }
        let [_, chain, from, nonce, to, value, data, gas, fees, sent] = parts[..] else {
            return Err(bad("not ten fields"));
        };
        let number = |s: &str, what: &str| s.parse::<u64>().map_err(|_| bad(what));
        let bytes = |s: &str, what: &str| hex::decode(s).map_err(|_| bad(what));
        let address = |s: &str, what: &str| {
            let b = bytes(s, what)?;
            (b.len() == 20).then(|| Address::from_slice(&b)).ok_or_else(|| bad(what))
        };
        let template = UnsignedTx {
            chain_id: number(chain, "chain id")?,
            from: address(from, "from")?,
            nonce: number(nonce, "nonce")?,
            to: if to == "-" { None } else { Some(address(to, "to")?) },
            value: U256::from_str_radix(value, 16).map_err(|_| bad("value"))?,
            data: bytes(data, "data")?,
            gas: number(gas, "gas")?,
            fees: parse_fees(fees).ok_or_else(|| bad("fees"))?,
        };
        let mut txs = Vec::new();
        for tx in sent.split(';').filter(|s| !s.is_empty()) {
            let [kind, fees, hash, raw] = tx.split(',').collect::<Vec<_>>()[..] else {
                return Err(bad("a transaction is not four fields"));
            };
            let kind = match kind {
                "o" => TxKind::Original,
                "s" => TxKind::SpeedUp,
                "c" => TxKind::Cancel,
                _ => return Err(bad("a transaction's kind")),
            };
            let hash = bytes(hash, "a hash")?;
            let hash = (hash.len() == 32).then(|| B256::from_slice(&hash)).ok_or_else(|| bad("a hash"))?;
            let raw = bytes(raw, "signed bytes")?;
            if !raw.is_empty() && tx_hash(&raw) != hash {
                return Err(bad("a hash that is not its bytes' hash"));
            }
            let fees = parse_fees(fees).ok_or_else(|| bad("a transaction's fees"))?;
            txs.push(SentTx { hash, raw: Rc::from(raw), fees, kind });
        }
        if txs.is_empty() {
            return Err(bad("no transaction"));
        }
        Ok(JournalEntry { template, sent: txs })
    }
}

fn parse_fees(text: &str) -> Option<Fees> {
    let parts: Vec<&str> = text.split(':').collect();
    match parts[..] {
        ["e", max_fee, tip] => Some(Fees::Eip1559 { max_fee: max_fee.parse().ok()?, tip: tip.parse().ok()? }),
        ["l", price] => Some(Fees::Legacy { gas_price: price.parse().ok()? }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> JournalEntry {
        let raw: Rc<[u8]> = Rc::from(vec![0x02, 0xf8, 0x6b, 0x01, 0x02]);
        let template = UnsignedTx {
            chain_id: 31337,
            from: Address::repeat_byte(0xab),
            nonce: 1042,
            to: Some(Address::repeat_byte(0x11)),
            value: U256::from(10u64).pow(U256::from(18u64)),
            data: vec![0xde, 0xad],
            gas: 21_000,
            fees: Fees::Eip1559 { max_fee: 3_000_000_000, tip: 1_000_000_000 },
        };
        let original = SentTx { hash: tx_hash(&raw), raw, fees: template.fees, kind: TxKind::Original };
        let wallet = SentTx {
            hash: B256::repeat_byte(7),
            raw: Rc::from(Vec::new()),
            fees: Fees::Legacy { gas_price: 5 },
            kind: TxKind::Cancel,
        };
        JournalEntry { template, sent: vec![original, wallet] }
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let e = entry();
        assert_eq!(JournalEntry::decode(&e.encode()), Ok(e.clone()));
        let mut create = e;
        create.template.to = None;
        create.template.data = Vec::new();
        assert_eq!(JournalEntry::decode(&create.encode()), Ok(create));
    }

    #[test]
    fn a_tampered_unknown_or_broken_record_is_refused() {
        let text = entry().encode();
        let tampered = text.replacen("02f86b0102", "02f86b0103", 1);
        assert_ne!(tampered, text);
        assert!(JournalEntry::decode(&tampered).is_err(), "bytes that are not the hash's");
        assert!(JournalEntry::decode(&text.replacen("j1", "j2", 1)).is_err(), "another version");
        for cut in [1, 10, text.len() / 2, text.len() - 1] {
            assert!(JournalEntry::decode(&text[..cut]).is_err(), "cut at {cut}");
        }
        assert!(JournalEntry::decode("j1|1|ab|0|-|0||21000|l:1|").is_err(), "a short address, no transaction");
        assert!(JournalEntry::decode("").is_err());
    }
}
