//! Latency statistics: percentiles over measured durations, as reported in the JSON report.

use std::time::Duration;

use serde::Serialize;

/// Summary of a set of latency samples, in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Latency {
    /// How many samples were measured.
    pub samples: usize,
    /// Median.
    pub p50_ms: f64,
    /// 99th percentile (nearest rank).
    pub p99_ms: f64,
    /// Largest sample.
    pub max_ms: f64,
}

impl Latency {
    /// Summarises `samples`; all fields are zero when there are none.
    pub fn from_samples(samples: &[Duration]) -> Self {
        let mut millis: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        millis.sort_by(f64::total_cmp);
        Self {
            samples: millis.len(),
            p50_ms: round2(percentile(&millis, 50.0)),
            p99_ms: round2(percentile(&millis, 99.0)),
            max_ms: round2(millis.last().copied().unwrap_or_default()),
        }
    }
}

/// The nearest-rank percentile `p` (0–100] of ascending `sorted`; 0 for no samples.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    // Nearest rank: the smallest value with at least p% of the samples at or below it.
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// How far each interval between consecutive timestamps strays from `period`.
pub fn drift(timestamps: &[jiff::Timestamp], period: Duration) -> Vec<Duration> {
    timestamps
        .windows(2)
        .map(|pair| {
            let interval = pair[1].duration_since(pair[0]).unsigned_abs();
            interval.abs_diff(period)
        })
        .collect()
}

/// Rounds to two decimals, so the report stays readable.
pub fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_pick_existing_samples() {
        let sorted: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&sorted, 50.0), 50.0);
        assert_eq!(percentile(&sorted, 99.0), 99.0);
        assert_eq!(percentile(&sorted, 100.0), 100.0);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }

    #[test]
    fn latency_summary_is_in_milliseconds_and_sorted() {
        let samples = [30, 10, 20].map(Duration::from_millis);
        let latency = Latency::from_samples(&samples);
        assert_eq!(latency.samples, 3);
        assert_eq!(latency.p50_ms, 20.0);
        assert_eq!(latency.p99_ms, 30.0);
        assert_eq!(latency.max_ms, 30.0);
        assert_eq!(Latency::from_samples(&[]), Latency::default());
    }

    #[test]
    fn drift_is_the_distance_of_each_interval_from_the_period() {
        let start = jiff::Timestamp::now();
        let instants = [0, 2_010, 3_990, 6_000].map(|ms| start + Duration::from_millis(ms));
        let drifts = drift(&instants, Duration::from_secs(2));
        assert_eq!(
            drifts,
            [10, 20, 10].map(Duration::from_millis).to_vec(),
            "late, early and late renewals all count as drift"
        );
    }
}
