//! [`Backoff`]: how long to wait after failures in a row.

use std::{
    hash::{BuildHasher as _, Hasher as _},
    time::Duration,
};

/// Exponential backoff: `first` after one failure, doubled after each further one, never more
/// than `max`. With `jitter` (0 to 1), each wait is cut by a random share of up to that
/// fraction, so clients that failed together do not come back together.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The wait after the first failure.
    pub first: Duration,
    /// The longest wait.
    pub max: Duration,
    /// The largest share of a wait that may be cut at random (0: exact waits).
    pub jitter: f64,
}

impl Backoff {
    /// Exact waits: `first`, `2 × first`, … up to `max`.
    pub const fn exponential(first: Duration, max: Duration) -> Self {
        Self {
            first,
            max,
            jitter: 0.0,
        }
    }

    /// The same waits, each cut by a random share of up to `jitter` (clamped to 0–1).
    pub const fn with_jitter(self, jitter: f64) -> Self {
        Self {
            jitter: jitter.clamp(0.0, 1.0),
            ..self
        }
    }

    /// The wait after `failures` failures in a row: none after none.
    pub fn after(&self, failures: u32) -> Duration {
        if failures == 0 {
            return Duration::ZERO;
        }
        let full = self
            .first
            .saturating_mul(1 << (failures - 1).min(20))
            .min(self.max);
        // Clamped here too: the fields are public, and a share outside 0–1 (or NaN) must
        // neither lengthen a wait nor make it negative.
        let jitter = self.jitter.clamp(0.0, 1.0);
        if jitter > 0.0 {
            full.mul_f64(1.0 - jitter * random_share())
        } else {
            full
        }
    }
}

/// A random number in [0, 1): std's per-instance random hash keys, no generator to carry.
fn random_share() -> f64 {
    let bits = std::hash::RandomState::new().build_hasher().finish() >> 11;
    bits as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_cap_and_jitter_only_shortens() {
        let exact = Backoff::exponential(Duration::from_secs(1), Duration::from_secs(30));
        let waits: Vec<u64> = (0..=7).map(|n| exact.after(n).as_secs()).collect();
        assert_eq!(waits, [0, 1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(exact.after(u32::MAX), Duration::from_secs(30));
        let jittered = exact.with_jitter(0.25);
        let waits: Vec<Duration> = (0..200).map(|_| jittered.after(3)).collect();
        assert!(
            waits
                .iter()
                .all(|w| (Duration::from_secs(3)..=Duration::from_secs(4)).contains(w)),
            "{waits:?}"
        );
        assert!(
            waits.iter().any(|w| *w != waits[0]),
            "200 jittered waits were all {:?}",
            waits[0]
        );
        assert_eq!(exact.with_jitter(7.0).jitter, 1.0);
        assert_eq!(exact.with_jitter(-1.0).jitter, 0.0);
        for jitter in [7.0, -3.0, f64::NAN, f64::INFINITY] {
            let odd = Backoff { jitter, ..exact };
            let wait = odd.after(2);
            assert!(wait <= Duration::from_secs(2), "{jitter}: {wait:?}");
        }
    }
}
