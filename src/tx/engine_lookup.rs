//! What the nodes know about our transactions: the receipt of any of a
//! nonce's hashes, whether any endpoint has one of them, and the
//! re-broadcast that, when nobody has them, asks a node why.

use alloy_primitives::B256;

use super::engine::{SendOutcome, SlotCell, TxEngine, TxEvent, TxNode};
use super::receipt::ReceiptInfo;

impl<N: TxNode> TxEngine<N> {
    /// Whether any endpoint knows any of `hashes` (pending or mined).
    pub(super) async fn any_known(&self, hashes: &[B256]) -> bool {
        for hash in hashes {
            if self.node.known(*hash).await {
                return true;
            }
        }
        false
    }

    /// The first receipt found among `hashes`, newest first, and whether
    /// every lookup got an answer (a failed lookup is not "no receipt").
    pub(super) async fn find_receipt(&self, hashes: &[B256]) -> (Option<(ReceiptInfo, N::Receipt)>, bool) {
        let mut answered = true;
        for hash in hashes.iter().rev() {
            match self.node.receipt(*hash).await {
                Ok(Some(found)) => return (Some(found), true),
                Ok(None) => {}
                Err(_) => answered = false,
            }
        }
        (None, answered)
    }

    /// Sends the newest bytes to every endpoint again. If no node knows any
    /// of our hashes afterwards, one more send through the pool asks why:
    /// a certain refusal (funds, fee floor…) means the transaction is
    /// dropped, and that error is returned.
    pub(super) async fn rebroadcast(
        &self,
        cell: &SlotCell<N::Receipt, N::Error>,
        emit: &dyn Fn(TxEvent),
    ) -> Option<N::Error> {
        let latest = cell.slot.borrow().latest().cloned();
        let tx = latest.filter(|tx| !tx.raw.is_empty())?;
        emit(TxEvent::Rebroadcast { nonce: cell.slot.borrow().nonce(), hash: tx.hash });
        self.node.rebroadcast(&tx.raw).await;
        let hashes: Vec<B256> = cell.slot.borrow().sent().iter().map(|s| s.hash).collect();
        for hash in hashes {
            if self.node.known(hash).await {
                return None;
            }
        }
        match self.node.send_raw(&tx.raw).await {
            SendOutcome::Rejected(error) => Some(error),
            _ => None,
        }
    }
}
