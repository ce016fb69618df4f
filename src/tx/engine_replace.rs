//! Replacements and gap repair: the two places where the watcher signs a
//! new transaction for a nonce (a speed-up or cancel of its own nonce, a
//! 0-value filler for a missing lower one).

use std::rc::Rc;

use super::engine::{tx_hash, Account, SendOutcome, Signed, SlotCell, TxEngine, TxEvent, TxFailure, TxNode, TxSigner};
use super::fees::{self, FeeError};
use super::slot::{SentTx, TxKind};
use super::{TxOptions, UnsignedTx};

impl<N: TxNode> TxEngine<N> {
    /// Signs and sends one replacement of `kind`, priced above the newest.
    /// `Ok(false)`: held at the ceiling (nothing signed; the wait restarts).
    pub(super) async fn replace<S: TxSigner<N::Error>>(
        &self,
        signer: &S,
        cell: &SlotCell<N::Receipt, N::Error>,
        kind: TxKind,
        head: u64,
        options: TxOptions,
        emit: &dyn Fn(TxEvent),
    ) -> Result<bool, TxFailure<N::Error>> {
        let Some(newest) = cell.slot.borrow().latest().cloned() else { return Ok(false) };
        let nonce = cell.slot.borrow().nonce();
        let since = cell.slot.borrow().waiting_since();
        let network = self.network_fees().await;
        let priced = fees::replacement(newest.fees, network, options.bump_percent, options.fee_ceiling);
        let fees = match priced {
            Ok(fees) => fees,
            // Held at the ceiling: what was sent stays out there, re-broadcast; a
            // later step bumps it if fees fall under the ceiling.
            Err(FeeError::AtCeiling { .. }) if options.hold_at_ceiling => {
                cell.slot.borrow_mut().end_replacement(head);
                return Ok(false);
            }
            Err(FeeError::AtCeiling { needed, ceiling }) => {
                let hashes = cell.slot.borrow().sent().iter().map(|s| s.hash).collect();
                return Err(TxFailure::FeeCeiling { nonce, hashes, needed, ceiling });
            }
            Err(e) => return Err(TxFailure::Fees(e)),
        };
        // An adopted record's template is checked against the original's bytes first.
        if kind == TxKind::SpeedUp && !self.template_trusted(signer, cell).await {
            cell.slot.borrow_mut().end_replacement(head);
            return Ok(false);
        }
        let unsigned = {
            let template = cell.template.borrow();
            match kind {
                TxKind::Cancel => template.cancel(fees),
                _ => UnsignedTx { fees, ..template.clone() },
            }
        };
        cell.slot.borrow_mut().begin_replacement(kind);
        let signed = signer.sign(&unsigned).await;
        // A cancel asked for while this speed-up was being signed wins: the
        // speed-up is dropped unsent, so it cannot be mined ahead of the cancel.
        let superseded = kind == TxKind::SpeedUp && cell.slot.borrow().cancel_requested();
        let result = match signed {
            Err(_) => Ok(()),                           // keep waiting on what was sent; the next step tries again
            Ok(Signed::Raw(_)) if superseded => Ok(()), // a wallet-sent one is out there: recorded below
            Ok(signed) => {
                let (hash, raw) = match signed {
                    Signed::Raw(raw) => (tx_hash(&raw), raw),
                    Signed::SentByWallet(hash) => (hash, Vec::new()),
                };
                let tx = SentTx { hash, raw: Rc::from(raw), fees, kind };
                // Journaled before it may reach a node; a journal that refuses it
                // (another engine took the nonce over, the store is away) drops it unsent.
                if !tx.raw.is_empty() && !self.journal_replacement(cell, &tx).await {
                    let head_now = self.node.block_number().await.map_or(head, |h| h.max(head));
                    cell.slot.borrow_mut().end_replacement(head_now);
                    return Ok(true);
                }
                cell.slot.borrow_mut().record(tx.clone(), Some(head));
                emit(TxEvent::Replacement { nonce, kind, hash, replaces: newest.hash, fees, block: head, since });
                if !tx.raw.is_empty() {
                    match self.node.send_raw(&tx.raw).await {
                        SendOutcome::Accepted => emit(TxEvent::Submitted { nonce, hash, kind }),
                        SendOutcome::Unknown(_) => emit(TxEvent::OutcomeUnknown { nonce, hash }),
                        // Mined meanwhile, underpriced against a pooled tx, or
                        // refused: the receipts of every hash decide.
                        _ => {}
                    }
                }
                Ok(())
            }
        };
        // Signing and sending can take blocks (a wallet prompt, a slow pool):
        // the wait for this replacement counts from the head as it is now.
        let head_now = self.node.block_number().await.map_or(head, |h| h.max(head));
        cell.slot.borrow_mut().end_replacement(head_now);
        result.map(|()| true)
    }

    /// The node lacks nonces below our lowest live one: report; fill the
    /// ones we have no transaction for with 0-value self-transfers (not
    /// with a shared nonce book: they may be another worker's).
    pub(super) async fn check_gap<S: TxSigner<N::Error>>(
        &self,
        signer: &S,
        account: &Account<N::Receipt, N::Error>,
        nonce: u64,
        options: TxOptions,
        emit: &dyn Fn(TxEvent),
    ) {
        let Ok(pending) = self.node.transaction_count(signer.address(), true).await else { return };
        let gap = account.book.borrow().gap(pending);
        let Some(gap) = gap.filter(|g| g.end == nonce) else { return };
        let ours: Vec<u64> = account.slots.borrow().keys().copied().filter(|n| gap.contains(n)).collect();
        // With a shared book the nonces below ours may be another worker's,
        // in flight: only it may sign them (a filler of ours would collide).
        let repair = options.repair_gaps && gap.end - gap.start <= 16 && self.fleet.borrow().is_none();
        emit(TxEvent::NonceGap { from: gap.start, to: gap.end, repaired: repair });
        if !repair {
            return;
        }
        let Some(template) = account.slots.borrow().get(&nonce).map(|c| c.template.borrow().clone()) else { return };
        let Some(network) = self.network_fees().await else { return };
        let Ok(fees) = fees::cap_initial(network, None, options.fee_ceiling) else { return };
        for missing in gap.filter(|n| !ours.contains(n)) {
            let filler = UnsignedTx { nonce: missing, ..template.cancel(fees) };
            if let Ok(Signed::Raw(raw)) = signer.sign(&filler).await {
                let _ = self.node.send_raw(&raw).await;
            }
        }
    }
}
