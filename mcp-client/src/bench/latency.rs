//! Latency samples and their order statistics.

use std::time::Duration;

use serde::Serialize;

/// Durations of calls, sorted once, read by percentile.
#[derive(Debug, Clone, Default)]
pub struct Latencies {
    sorted: Vec<Duration>,
}

impl Latencies {
    /// Sorts `samples`.
    pub fn new(mut samples: Vec<Duration>) -> Self {
        samples.sort_unstable();
        Self { sorted: samples }
    }

    /// How many samples there are.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The nearest-rank percentile `p` (0–100): the smallest sample that at least `p` % of
    /// the samples do not exceed. Zero when there are no samples.
    pub fn percentile(&self, p: f64) -> Duration {
        let Some(last) = self.sorted.len().checked_sub(1) else {
            return Duration::ZERO;
        };
        let rank = (p.clamp(0.0, 100.0) * self.sorted.len() as f64 / 100.0).ceil() as usize;
        self.sorted[rank.saturating_sub(1).min(last)]
    }

    /// The largest sample.
    pub fn max(&self) -> Duration {
        self.sorted.last().copied().unwrap_or_default()
    }

    /// The mean of the samples.
    pub fn mean(&self) -> Duration {
        let total: Duration = self.sorted.iter().sum();
        u32::try_from(self.sorted.len())
            .ok()
            .filter(|&n| n > 0)
            .map_or(Duration::ZERO, |n| total / n)
    }

    /// p50, p90, p99, max and mean in microseconds.
    pub fn summary(&self) -> Summary {
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        Summary {
            p50_us: us(self.percentile(50.0)),
            p90_us: us(self.percentile(90.0)),
            p99_us: us(self.percentile(99.0)),
            max_us: us(self.max()),
            mean_us: us(self.mean()),
        }
    }
}

/// The usual order statistics of a set of latencies, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Slowest.
    pub max_us: f64,
    /// Mean.
    pub mean_us: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(values: &[u64]) -> Latencies {
        Latencies::new(values.iter().map(|&v| Duration::from_millis(v)).collect())
    }

    #[test]
    fn percentiles_are_nearest_rank_over_the_sorted_samples() {
        let samples = ms(&[10, 1, 9, 2, 8, 3, 7, 4, 6, 5]);
        assert_eq!(samples.percentile(50.0), Duration::from_millis(5));
        assert_eq!(samples.percentile(90.0), Duration::from_millis(9));
        assert_eq!(samples.percentile(99.0), Duration::from_millis(10));
        assert_eq!(samples.percentile(0.0), Duration::from_millis(1));
        assert_eq!(samples.percentile(100.0), Duration::from_millis(10));
        assert_eq!(samples.max(), Duration::from_millis(10));
        assert_eq!(samples.mean(), Duration::from_micros(5_500));
    }

    #[test]
    fn one_slow_call_in_a_hundred_is_the_p99_but_not_the_p90() {
        let mut values = vec![1; 99];
        values.push(50);
        let samples = ms(&values);
        assert_eq!(samples.percentile(90.0), Duration::from_millis(1));
        assert_eq!(samples.percentile(99.0), Duration::from_millis(1));
        assert_eq!(samples.percentile(99.5), Duration::from_millis(50));
        assert_eq!(samples.max(), Duration::from_millis(50));
    }

    #[test]
    fn no_samples_read_as_zero_rather_than_panicking() {
        let none = Latencies::default();
        assert!(none.is_empty());
        assert_eq!(none.percentile(50.0), Duration::ZERO);
        assert_eq!(none.max(), Duration::ZERO);
        assert_eq!(none.mean(), Duration::ZERO);
        assert_eq!(none.summary().p99_us, 0.0);
    }
}
