//! The engine's nonces when workers in several processes send from one
//! account: taken from the fleet's shared book (`fleet_nonce.rs`, Redis
//! through the wrapper) instead of this engine's own, with the book's one
//! extra step: a nonce is marked live *before* its first broadcast, and a
//! send whose reservation lapsed meanwhile broadcasts nothing.
//!
//! ```text
//!   allocate ─ NeedsInit ─▶ the chain's pending count ─▶ resync ─ Busy(d) ─▶ wait ≤ d, again
//!            ─ Ok(n) ─▶ sign ─ fails ─▶ release(n)
//!                            ─ live(n) ─ Lost ─▶ the bytes are dropped unsent; allocate again
//!                                      ─ Ok ─▶ broadcast (engine_send.rs)
//!   the store does not answer ─▶ Coordination: the send fails, no nonce guessed
//! ```
//! Without a shared book (`TxEngine::share_nonces` never called) every
//! call here is the local book's, as before.

use std::rc::Rc;
use std::time::Duration;

use alloy_primitives::{keccak256, Address};

use super::engine::{Account, TxEngine, TxFailure, TxNode};
use super::fleet_nonce::{FleetNonces, FleetOp, FleetReply, SharedNonces};
use crate::runtime::Runtime;

/// How long a reservation is held for its send to sign and mark it live.
/// A signer slower than this (a hardware wallet waiting for a button)
/// finds its nonce lost and signs again with another: never a broadcast
/// with a nonce the book may have handed out twice.
const RESERVATION_HOLD: Duration = Duration::from_secs(120);
/// How many times a send waits out another worker's unbroadcast nonce
/// before a resync, at most this long each time.
const BUSY_WAITS: u32 = 20;
const BUSY_WAIT_MAX: Duration = Duration::from_millis(500);

/// The shared book's key for an account: a hash of chain id and address
/// (no secret; the same in every process).
pub fn account_key(chain_id: u64, address: Address) -> u64 {
    let mut bytes = chain_id.to_be_bytes().to_vec();
    bytes.extend_from_slice(address.as_slice());
    let digest = keccak256(&bytes);
    u64::from_be_bytes(digest[..8].try_into().unwrap_or([0; 8]))
}

impl<N: TxNode> TxEngine<N> {
    /// From now on this engine's sends take their nonces from `book`,
    /// shared with every engine that names the same store; `member`
    /// names this engine among them (random per relayer).
    pub fn share_nonces(&self, book: Rc<dyn FleetNonces>, member: String) {
        *self.fleet.borrow_mut() = Some(Rc::new(SharedNonces { book, member, sends: 0.into() }));
    }

    /// Whether this engine's nonces are the fleet's (a shared book is attached).
    pub fn shares_nonces(&self) -> bool {
        self.fleet.borrow().is_some()
    }

    /// A nonce for a send from `from` on `chain_id`, and the name of its
    /// reservation in the shared book (`None`: the local book's).
    /// `last_tried`: the nonce the send last signed for, what a local book
    /// that cannot allocate reports as contended.
    pub(super) async fn take_nonce<R: Runtime>(
        &self,
        runtime: &R,
        account: &Account<N::Receipt, N::Error>,
        chain_id: u64,
        from: Address,
        last_tried: u64,
    ) -> Result<(u64, Option<String>), TxFailure<N::Error>> {
        let Some(shared) = self.fleet.borrow().clone() else {
            if !account.book.borrow().is_ready() {
                let pending = self.node.transaction_count(from, true).await.map_err(TxFailure::Node)?;
                account.book.borrow_mut().init(pending);
            }
            let nonce = account.book.borrow_mut().allocate().map_err(|_| TxFailure::NonceContention(last_tried))?;
            return Ok((nonce, None));
        };
        let key = account_key(chain_id, from);
        shared.sends.set(shared.sends.get() + 1);
        let member = format!("{}-{}", shared.member, shared.sends.get());
        let hold = RESERVATION_HOLD.as_millis() as u64;
        let mut waits = 0;
        loop {
            match call(&shared, FleetOp::Allocate, key, &member, hold).await? {
                FleetReply::Ok(nonce) => return Ok((nonce, Some(member))),
                FleetReply::NeedsInit => {
                    let pending = self.node.transaction_count(from, true).await.map_err(TxFailure::Node)?;
                    match call(&shared, FleetOp::Resync, key, &member, pending).await? {
                        FleetReply::Busy(left) if waits < BUSY_WAITS => {
                            waits += 1;
                            runtime.sleep(left.min(BUSY_WAIT_MAX)).await;
                        }
                        FleetReply::Ok(_) => {}
                        other => return Err(unexpected(other)),
                    }
                }
                other => return Err(unexpected(other)),
            }
        }
    }

    /// Tells the shared book (if any) what became of `nonce`: released
    /// (never broadcast), abandoned, settled, or the chain's pending count
    /// (`Resync`). Best effort: a store that misses it costs a nonce held
    /// until its hold lapses (release) or a live entry kept until the book
    /// expires, never a nonce handed out twice.
    pub(super) async fn tell_book(&self, op: FleetOp, chain_id: u64, from: Address, member: Option<&str>, arg: u64) {
        let Some(shared) = self.fleet.borrow().clone() else { return };
        let _ = call::<N::Error>(&shared, op, account_key(chain_id, from), member.unwrap_or(&shared.member), arg).await;
    }
}

async fn call<E>(
    shared: &SharedNonces,
    op: FleetOp,
    key: u64,
    member: &str,
    arg: u64,
) -> Result<FleetReply, TxFailure<E>> {
    shared.book.call(op, key, member, arg).await.map_err(|e| TxFailure::Coordination(e.0))
}

fn unexpected<E>(reply: FleetReply) -> TxFailure<E> {
    TxFailure::Coordination(format!("the fleet's nonce book answered {reply:?}"))
}
