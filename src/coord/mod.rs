//! What relayers share, so that many of them behave as one: a bot fleet on
//! one API key, replicas, a dapp open in several tabs.
//!
//! A relayer alone learns a key's limit, an endpoint's chain and its
//! breaker state by spending requests. Many relayers each learning alone
//! spend that many times over: every one checks every endpoint's chain id,
//! every one probes an exhausted key, every one sends its own half-open
//! probe. Here they pool what they learn, and a request never waits for
//! the pooling: sharing happens ahead of need.
//!
//! The first backend is the **realm** ([`realm::Realm`]): relayers in one
//! JS realm (one wasm instance: a Node process, a page, a worker) that name
//! the same endpoints share, with no configuration, one live state per key:
//!
//! ```text
//!   quota group ─ the same group name over the same endpoints, or an
//!                 endpoint's own implicit group (same URL and headers),
//!                 with the same tuning ─► one QuotaGroup object: one
//!                 bucket, one cooldown, one learned plan for all members
//!   endpoint    ─ the same URL and headers ─► one chain record: an
//!                 endpoint's verified chain id (and when), so one member's
//!                 check answers for all until the recheck is due
//!   retry budget ─ the same realm-budget tuning ─► one budget that every
//!                 member's first attempts pay into and every member's
//!                 retries and hedges draw on (besides their own), so a
//!                 thousand fresh relayers cannot add a thousand bursts
//! ```
//!
//! Keys ([`key`]) are hashes of what identifies the thing (never a secret
//! in clear, never a label) plus, for quota groups, the tuning: relayers
//! configured differently keep their own state. The registry holds weak
//! references: a state lives while a member uses it, and a closed relayer
//! gives its memory back.

pub mod endpoint_record;
pub mod head_rounds;
pub mod key;
pub mod news;
pub mod realm;

pub use realm::{EndpointRecord, Realm};
