//! Fee estimation and the replacement bump, as pure arithmetic.
//!
//! Why here and not in the signer: a replacement that is 10 % higher to
//! the wei is rejected by geth's `⌊old × 110/100⌋` check on some values
//! and by Besu's effective-price rule on others. Every bump is therefore
//! rounded *up* and made strictly larger than 10 % of the old value, on
//! both fee fields, and never lower than what the network asks for now.
//!
//! ```text
//!   estimate:  tip  = eth_maxPriorityFeePerGas | median feeHistory reward | 1 gwei
//!              max  = 2 × next base fee + tip          (room for two full blocks)
//!              no base fee at all → legacy gasPrice (eth_gasPrice)
//!   bump(old): each field f → max( ⌈f × (100 + bump%) / 100⌉,  ⌊f × 110/100⌋ + 1,  network f )
//!              max fee ≥ tip; a ceiling caps the max fee (or gas price);
//!              capped below the minimum replacement → AtCeiling
//! ```

use thiserror::Error;

/// One gwei, the fallback priority fee.
pub const GWEI: u128 = 1_000_000_000;

/// The fee fields of one transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fees {
    /// EIP-1559 (type 2).
    Eip1559 {
        /// `maxFeePerGas`, in wei.
        max_fee: u128,
        /// `maxPriorityFeePerGas`, in wei.
        tip: u128,
    },
    /// A legacy (type 0) `gasPrice`, in wei.
    Legacy {
        /// `gasPrice`, in wei.
        gas_price: u128,
    },
}

impl Fees {
    /// The most this transaction may pay per gas: what a ceiling bounds.
    pub const fn cap(self) -> u128 {
        match self {
            Fees::Eip1559 { max_fee, .. } => max_fee,
            Fees::Legacy { gas_price } => gas_price,
        }
    }
}

/// What the network said about fees, every field optional because any of
/// these calls may be unsupported or fail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FeeSample {
    /// The base fee of the next block (last entry of `eth_feeHistory`).
    pub next_base_fee: Option<u128>,
    /// `eth_maxPriorityFeePerGas`.
    pub tip_hint: Option<u128>,
    /// The median of recent `eth_feeHistory` rewards.
    pub reward_median: Option<u128>,
    /// `eth_gasPrice`.
    pub gas_price: Option<u128>,
}

/// Why a replacement cannot be priced.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
pub enum FeeError {
    /// The next replacement would have to exceed the user's ceiling.
    #[error("a replacement must pay at least {needed} wei per gas, above the ceiling of {ceiling} wei")]
    AtCeiling {
        /// The smallest acceptable max fee (or gas price).
        needed: u128,
        /// The user's ceiling.
        ceiling: u128,
    },
    /// The node gave nothing to price a transaction with.
    #[error("the network gave no fee data (eth_feeHistory, eth_maxPriorityFeePerGas and eth_gasPrice all failed)")]
    NoFeeData,
}

/// The network's current fee suggestion. Legacy only when there is no
/// base fee (a pre-London chain) but a gas price.
pub fn estimate(sample: FeeSample) -> Result<Fees, FeeError> {
    match sample.next_base_fee {
        Some(base) => {
            let tip = sample.tip_hint.or(sample.reward_median).unwrap_or(GWEI);
            Ok(Fees::Eip1559 { max_fee: base.saturating_mul(2).saturating_add(tip), tip })
        }
        None => sample.gas_price.map(|gas_price| Fees::Legacy { gas_price }).ok_or(FeeError::NoFeeData),
    }
}

/// The smallest value a node accepts in place of `old`: strictly more than
/// 10 % higher, and at least `bump_percent` higher, rounded up.
pub fn min_replacement(old: u128, bump_percent: u32) -> u128 {
    // ⌊old × 1.1⌋ + 1, saturating instead of overflowing.
    let strict_ten = (old / 10).saturating_mul(11).saturating_add((old % 10) * 11 / 10).saturating_add(1);
    let pct = u128::from(bump_percent);
    let scaled = (old / 100).saturating_mul(100 + pct).saturating_add(((old % 100) * (100 + pct)).div_ceil(100));
    strict_ten.max(scaled)
}

/// Caps a first transaction's fees at the ceiling (the max fee, keeping the
/// tip within it). A first transaction may wait at the ceiling, but never
/// below what the next block needs (`next_base_fee`): a max fee under the
/// base fee is refused by nodes or never mined, so that is `AtCeiling`
/// before anything is signed.
pub fn cap_initial(fees: Fees, next_base_fee: Option<u128>, ceiling: Option<u128>) -> Result<Fees, FeeError> {
    let Some(ceiling) = ceiling else { return Ok(fees) };
    if let Some(needed) = next_base_fee.filter(|&base| base > ceiling) {
        return Err(FeeError::AtCeiling { needed, ceiling });
    }
    Ok(match fees {
        Fees::Eip1559 { max_fee, tip } => {
            let max_fee = max_fee.min(ceiling);
            Fees::Eip1559 { max_fee, tip: tip.min(max_fee) }
        }
        Fees::Legacy { gas_price } => Fees::Legacy { gas_price: gas_price.min(ceiling) },
    })
}

/// The fees of the next replacement of a transaction that paid `old`:
/// both fields bumped, never below `network`, the max fee within `ceiling`.
/// A legacy transaction stays legacy (its gas price is both fields).
pub fn replacement(
    old: Fees,
    network: Option<Fees>,
    bump_percent: u32,
    ceiling: Option<u128>,
) -> Result<Fees, FeeError> {
    let limit = ceiling.unwrap_or(u128::MAX);
    let at_ceiling = |needed| FeeError::AtCeiling { needed, ceiling: limit };
    match old {
        Fees::Eip1559 { max_fee, tip } => {
            let (net_max, net_tip) = match network {
                Some(Fees::Eip1559 { max_fee, tip }) => (max_fee, tip),
                Some(Fees::Legacy { gas_price }) => (gas_price, gas_price),
                None => (0, 0),
            };
            let min_max = min_replacement(max_fee, bump_percent);
            let min_tip = min_replacement(tip, bump_percent);
            if min_max > limit || min_tip > limit {
                return Err(at_ceiling(min_max.max(min_tip)));
            }
            let new_max = min_max.max(net_max).max(min_tip).min(limit);
            let new_tip = min_tip.max(net_tip).min(new_max);
            Ok(Fees::Eip1559 { max_fee: new_max, tip: new_tip })
        }
        Fees::Legacy { gas_price } => {
            let net = network.map(Fees::cap).unwrap_or(0);
            let min = min_replacement(gas_price, bump_percent);
            if min > limit {
                return Err(at_ceiling(min));
            }
            Ok(Fees::Legacy { gas_price: min.max(net).min(limit) })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn eip(max_fee: u128, tip: u128) -> Fees {
        Fees::Eip1559 { max_fee, tip }
    }

    #[test]
    fn estimate_prefers_the_tip_hint_then_the_reward_median_then_one_gwei() {
        let base = FeeSample { next_base_fee: Some(10 * GWEI), ..Default::default() };
        assert_eq!(estimate(base), Ok(eip(21 * GWEI, GWEI)));
        let median = FeeSample { reward_median: Some(2 * GWEI), ..base };
        assert_eq!(estimate(median), Ok(eip(22 * GWEI, 2 * GWEI)));
        let hinted = FeeSample { tip_hint: Some(3 * GWEI), ..median };
        assert_eq!(estimate(hinted), Ok(eip(23 * GWEI, 3 * GWEI)));
    }

    #[test]
    fn estimate_falls_back_to_legacy_then_fails_typed() {
        let legacy = FeeSample { gas_price: Some(5), ..Default::default() };
        assert_eq!(estimate(legacy), Ok(Fees::Legacy { gas_price: 5 }));
        assert_eq!(estimate(FeeSample::default()), Err(FeeError::NoFeeData));
    }

    #[test]
    fn the_minimum_replacement_is_strictly_more_than_ten_percent_rounded_up() {
        assert_eq!(min_replacement(100, 10), 111); // exactly 110 would be rejected by Besu at equal base fee
        assert_eq!(min_replacement(0, 10), 1);
        assert_eq!(min_replacement(9, 10), 10);
        assert_eq!(min_replacement(1000, 12), 1120);
        assert_eq!(min_replacement(1001, 12), 1122); // 1121.12 rounds up
        assert_eq!(min_replacement(u128::MAX, 12), u128::MAX);
    }

    #[test]
    fn a_replacement_raises_both_fields_and_meets_the_network() {
        let bumped = replacement(eip(100, 10), None, 10, None).unwrap();
        assert_eq!(bumped, eip(111, 12));
        let network = eip(500, 20);
        assert_eq!(replacement(eip(100, 10), Some(network), 10, None), Ok(eip(500, 20)));
    }

    #[test]
    fn a_replacement_within_the_ceiling_is_capped_and_beyond_it_fails() {
        assert_eq!(replacement(eip(100, 10), Some(eip(500, 20)), 10, Some(300)), Ok(eip(300, 20)));
        assert_eq!(
            replacement(eip(300, 20), None, 10, Some(300)),
            Err(FeeError::AtCeiling { needed: 331, ceiling: 300 })
        );
    }

    #[test]
    fn a_legacy_replacement_stays_legacy() {
        let old = Fees::Legacy { gas_price: 1000 };
        assert_eq!(replacement(old, None, 15, None), Ok(Fees::Legacy { gas_price: 1150 }));
        assert!(replacement(old, None, 15, Some(1100)).is_err());
    }

    #[test]
    fn initial_fees_wait_at_the_ceiling() {
        assert_eq!(cap_initial(eip(500, 600), None, Some(300)), Ok(eip(300, 300)));
        assert_eq!(cap_initial(eip(500, 6), Some(200), None), Ok(eip(500, 6)));
        assert_eq!(cap_initial(eip(500, 6), Some(300), Some(300)), Ok(eip(300, 6)), "at the base fee: may wait");
        assert_eq!(
            cap_initial(eip(500, 6), Some(301), Some(300)),
            Err(FeeError::AtCeiling { needed: 301, ceiling: 300 }),
            "below the next base fee: refused before signing"
        );
    }

    #[test]
    fn the_cap_is_the_max_fee_or_the_gas_price() {
        assert_eq!(eip(300, 20).cap(), 300);
        assert_eq!(Fees::Legacy { gas_price: 77 }.cap(), 77);
    }

    #[test]
    fn a_bump_below_ten_percent_still_gives_strictly_more_than_ten_percent() {
        assert_eq!(min_replacement(9, 0), 10, "⌊9.9⌋ + 1");
        assert_eq!(min_replacement(105, 5), 116, "⌊115.5⌋ + 1, above the 5 % bump's 111");
        assert_eq!(min_replacement(1005, 0), 1106);
    }

    #[test]
    fn a_replacement_exactly_at_the_ceiling_is_allowed() {
        assert_eq!(replacement(eip(100, 10), None, 10, Some(111)), Ok(eip(111, 12)), "the max fee lands on it");
        assert_eq!(replacement(eip(100, 100), None, 10, Some(111)), Ok(eip(111, 111)), "both fields land on it");
        assert_eq!(
            replacement(eip(100, 100), None, 10, Some(110)),
            Err(FeeError::AtCeiling { needed: 111, ceiling: 110 })
        );
        let legacy = Fees::Legacy { gas_price: 1000 };
        assert_eq!(replacement(legacy, None, 15, Some(1150)), Ok(Fees::Legacy { gas_price: 1150 }));
        assert_eq!(replacement(legacy, None, 15, Some(1149)), Err(FeeError::AtCeiling { needed: 1150, ceiling: 1149 }));
    }

    proptest! {
        /// Whatever the inputs, an accepted replacement satisfies geth's and
        /// EDR's rules on both fields, the tip never exceeds the max fee and
        /// the ceiling holds.
        #[test]
        fn replacements_always_clear_every_clients_bump_rule(
            max_fee in 0u128..1u128 << 100, tip_frac in 0u32..=100, bump in 10u32..200,
            net in proptest::option::of((0u128..1u128 << 100, 0u128..1u128 << 90)),
            ceiling in proptest::option::of(0u128..1u128 << 101),
        ) {
            let tip = max_fee / 100 * u128::from(tip_frac);
            let network = net.map(|(m, t)| eip(m.max(t), t));
            if let Ok(Fees::Eip1559 { max_fee: m, tip: t }) = replacement(eip(max_fee, tip), network, bump, ceiling) {
                prop_assert!(m > max_fee && t > tip);
                prop_assert!(m * 10 >= max_fee * 11 && t * 10 >= tip * 11);
                prop_assert!(t <= m);
                if let Some(c) = ceiling { prop_assert!(m <= c); }
            }
        }
    }
}
