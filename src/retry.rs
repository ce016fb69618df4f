//! The small, general retry contract: `retry(action, config, should_retry)`.
//!
//! Three promises, each tested on the simulated clock:
//! 1. it returns the **last real result** of `action` (never an invented
//!    "retries exhausted" value, so callers see what actually failed);
//! 2. it stops as soon as `should_retry` says no;
//! 3. it never sleeps after the final attempt (a sleep nobody waits for
//!    only delays the caller's error).
//!
//! The relayer's request pipeline adds deadlines, budgets and failover on
//! top; this function is the building block for simpler uses. It keeps the
//! seed relayer's `RetryConfig`/`retry()` contract as the crate's public
//! Rust API, built from the same [`Backoff`] the pipeline uses. It drives
//! a [`Runtime`], so it sits above `policy` (which stays free of runtimes).

use std::future::Future;
use std::num::NonZeroU32;
use std::time::Duration;

use crate::config_error::ConfigError;
use crate::policy::Backoff;
use crate::runtime::Runtime;

/// How many times to try and how long to wait in between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryConfig {
    max_attempts: NonZeroU32,
    interval: Backoff,
}

impl RetryConfig {
    /// `max_attempts` counts the first try; zero is rejected because "never
    /// try" is not a retry policy.
    pub fn new(max_attempts: u32, interval: Backoff) -> Result<Self, ConfigError> {
        let max_attempts =
            NonZeroU32::new(max_attempts).ok_or_else(|| ConfigError::new("max_attempts", "must be at least 1"))?;
        Ok(RetryConfig { max_attempts, interval })
    }

    /// Total attempts allowed, the first included.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts.get()
    }

    /// The backoff schedule between attempts.
    pub fn interval(&self) -> Backoff {
        self.interval
    }
}

/// Runs `action(attempt)` until it succeeds in the eyes of `should_retry`
/// or the attempts run out, sleeping on `runtime` between attempts.
pub async fn retry<R, T, F, Fut, P>(runtime: &R, config: &RetryConfig, mut action: F, mut should_retry: P) -> T
where
    R: Runtime,
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = T>,
    P: FnMut(&T) -> bool,
{
    let mut previous = Duration::ZERO;
    let mut attempt = 0u32;
    loop {
        let result = action(attempt).await;
        let last = attempt.saturating_add(1) >= config.max_attempts();
        if last || !should_retry(&result) {
            return result;
        }
        let delay = config.interval.delay(attempt, previous, runtime.random_unit());
        previous = delay;
        runtime.sleep(delay).await;
        attempt += 1;
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::runtime::sim::SimRuntime;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    /// Runs `retry` with an action that fails `failures` times and records
    /// the virtual instant of every attempt.
    fn run(config: RetryConfig, failures: u32) -> (Result<u32, String>, Vec<u64>, u64) {
        let rt = SimRuntime::new(42);
        let calls = RefCell::new(Vec::new());
        let result = rt
            .block_on(retry(
                &rt,
                &config,
                |n| {
                    calls.borrow_mut().push(rt.now().since_epoch().as_millis() as u64);
                    async move {
                        if n < failures {
                            Err(format!("failure {n}"))
                        } else {
                            Ok(n)
                        }
                    }
                },
                |r: &Result<u32, String>| r.is_err(),
            ))
            .unwrap();
        let end = rt.now().since_epoch().as_millis() as u64;
        (result, calls.into_inner(), end)
    }

    #[test]
    fn zero_attempts_is_a_config_error_naming_the_field() {
        let err = RetryConfig::new(0, Backoff::default()).unwrap_err();
        assert_eq!(err.field(), "max_attempts");
    }

    #[test]
    fn returns_the_last_real_result_when_attempts_run_out() {
        let config = RetryConfig::new(3, Backoff::Fixed { base: MS(100), cap: MS(100) }).unwrap();
        let (result, calls, _) = run(config, u32::MAX);
        assert_eq!(result, Err("failure 2".to_string()));
        assert_eq!(calls.len(), 3);
    }

    #[test]
    fn does_not_sleep_after_the_final_attempt() {
        let config = RetryConfig::new(3, Backoff::Fixed { base: MS(100), cap: MS(100) }).unwrap();
        let (_, calls, end) = run(config, u32::MAX);
        assert_eq!(calls, [0, 100, 200]);
        assert_eq!(end, 200, "the clock must stop at the last attempt");
    }

    #[test]
    fn stops_as_soon_as_should_retry_says_no() {
        let rt = SimRuntime::new(1);
        let config = RetryConfig::new(10, Backoff::Fixed { base: MS(5), cap: MS(5) }).unwrap();
        let calls = RefCell::new(0);
        let result = rt
            .block_on(retry(
                &rt,
                &config,
                |n| {
                    *calls.borrow_mut() += 1;
                    async move {
                        if n == 0 {
                            "transient"
                        } else {
                            "revert"
                        }
                    }
                },
                |r: &&str| *r == "transient",
            ))
            .unwrap();
        assert_eq!(result, "revert");
        assert_eq!(*calls.borrow(), 2);
        assert_eq!(rt.now().since_epoch(), MS(5));
    }

    #[test]
    fn success_on_first_try_never_sleeps() {
        let config = RetryConfig::new(5, Backoff::default()).unwrap();
        let (result, calls, end) = run(config, 0);
        assert_eq!((result, calls, end), (Ok(0), vec![0], 0));
    }

    #[test]
    fn exact_schedules_of_the_deterministic_variants() {
        let cases = [
            (Backoff::Fixed { base: MS(100), cap: MS(1000) }, vec![0, 100, 200, 300, 400]),
            (Backoff::Linear { base: MS(100), cap: MS(1000) }, vec![0, 100, 300, 600, 1000]),
            (Backoff::Exponential { base: MS(100), cap: MS(1000) }, vec![0, 100, 300, 700, 1500]),
            (Backoff::Exponential { base: MS(100), cap: MS(250) }, vec![0, 100, 300, 550, 800]),
        ];
        for (backoff, expected) in cases {
            let (_, calls, _) = run(RetryConfig::new(5, backoff).unwrap(), u32::MAX);
            assert_eq!(calls, expected, "{backoff:?}");
        }
    }

    #[test]
    fn jittered_variants_stay_within_their_bounds_on_the_clock() {
        let base = MS(100);
        let cap = MS(1000);
        for backoff in [
            Backoff::FullJitter { base, cap },
            Backoff::EqualJitter { base, cap },
            Backoff::DecorrelatedJitter { base, cap },
        ] {
            let (_, calls, _) = run(RetryConfig::new(8, backoff).unwrap(), u32::MAX);
            let gaps: Vec<u64> = calls.windows(2).map(|w| w[1] - w[0]).collect();
            for (n, gap) in gaps.iter().enumerate() {
                let ceiling = (100u64 << n).min(1000);
                let (low, high) = match backoff {
                    Backoff::FullJitter { .. } => (0, ceiling),
                    Backoff::EqualJitter { .. } => (ceiling / 2, ceiling),
                    _ => (100, 1000),
                };
                assert!((low..=high).contains(gap), "{backoff:?} gap {n} = {gap}");
            }
            // Jitter really varies the delays.
            assert!(gaps.windows(2).any(|w| w[0] != w[1]), "{backoff:?} produced {gaps:?}");
        }
    }
}
