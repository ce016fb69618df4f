//! The charge a realm's lease is sized for (`Lease`): large among its
//! recent charges, but not the largest ever, nor a rare one.
//!
//! Sized by the largest charge ever, one large charge resized a fleet for
//! good: a fresh endpoint's chain check riding in one batch with the first
//! read (2 CU), or the relayer's own background head poll (`eth_blockNumber`,
//! 10 CU by default) among a user's 1-CU reads, made every grant that size,
//! held a quarter period and mostly expiring unspent, and the fleet's burst
//! grew to it at the expense of its rate: four workers at half their 30
//! requests/s key waited 0.2–0.4 s at the median and 2–4 s at p90, and
//! turned reads away. Now the [`PART`]-quantile of the last [`KEPT`]
//! charges: a charge that is one in ten or rarer does not size the lease;
//! when it comes it is asked for on its own (the lease's `need`), and a
//! charge above the fleet's burst is paid from a full bucket (`least`).

/// How many recent charges are kept.
pub const KEPT: usize = 32;

/// The quantile of the recent charges the lease is sized for.
pub const PART: f64 = 0.9;

/// The last [`KEPT`] charges paid, their [`PART`]-quantile, and the
/// largest charge waiting now (checked since the last one paid).
#[derive(Clone, Debug)]
pub(super) struct ChargeSizes {
    recent: [f64; KEPT],
    len: usize,
    next: usize,
    large: f64,
    waiting: f64,
}

impl ChargeSizes {
    /// None seen yet: `floor` stands for them.
    pub(super) fn new(floor: f64) -> Self {
        ChargeSizes { recent: [0.0; KEPT], len: 0, next: 0, large: floor, waiting: 0.0 }
    }

    /// A charge checked (it may wait, and be checked again at every wake).
    pub(super) fn checked(&mut self, cost: f64) {
        if cost.is_finite() {
            self.waiting = self.waiting.max(cost);
        }
    }

    /// A charge paid.
    pub(super) fn see(&mut self, cost: f64) {
        self.waiting = 0.0;
        if !(cost.is_finite() && cost > 0.0) {
            return;
        }
        self.recent[self.next] = cost;
        self.next = (self.next + 1) % KEPT;
        self.len = (self.len + 1).min(KEPT);
        let mut sorted = self.recent;
        let seen = &mut sorted[..self.len];
        crate::small_sort::sort_by(seen, |a, b| a.total_cmp(b).is_lt());
        self.large = seen[((self.len - 1) as f64 * PART).floor() as usize];
    }

    /// The charge the lease is sized for (CU): large among those paid
    /// lately, or the one waiting now if larger.
    pub(super) fn large(&self) -> f64 {
        self.large.max(self.waiting)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rare_large_charge_does_not_size_the_lease_a_common_one_does() {
        let mut sizes = ChargeSizes::new(1.0);
        assert_eq!(sizes.large(), 1.0);
        sizes.see(2.0); // a chain check in one batch with the first read
        assert_eq!(sizes.large(), 2.0, "the only charge seen");
        for _ in 0..9 {
            sizes.see(1.0);
        }
        assert_eq!(sizes.large(), 1.0, "one in ten");
        sizes.see(10.0); // a head poll
        for _ in 0..20 {
            sizes.see(1.0);
        }
        assert_eq!(sizes.large(), 1.0);
        // A member whose calls are a third 26 CU: sized for them.
        for k in 0..30 {
            sizes.see(if k % 3 == 0 { 26.0 } else { 1.0 });
        }
        assert_eq!(sizes.large(), 26.0);
        sizes.see(f64::NAN);
        sizes.see(-1.0);
        assert_eq!(sizes.large(), 26.0, "nonsense is not a charge");
        // A large charge waiting sizes the lease until it is paid.
        for _ in 0..32 {
            sizes.see(1.0);
        }
        sizes.checked(10.0);
        sizes.checked(10.0);
        assert_eq!(sizes.large(), 10.0, "asked for while it waits");
        sizes.see(10.0);
        assert_eq!(sizes.large(), 1.0, "paid: one in 32");
    }
}
