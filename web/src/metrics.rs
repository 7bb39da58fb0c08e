//! What the server did, in Prometheus' text format (version 0.0.4), served at `GET /metrics`
//! ([`crate::health`]).
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `bench_web_requests_total` | counter | `route` (the matched route, `unmatched` for 404s), `method`, `status` |
//! | `bench_web_request_duration_seconds` | histogram | `route` |
//! | `bench_web_ingested_runs_total` | counter | (runs newly stored by pushes) |
//! | `bench_web_auth_failures_total` | counter | (wrong tokens) |
//! | `bench_web_throttled_total` | counter | (answers 429) |
//!
//! Labels come from the route table, never from the request's path, so their number is bounded
//! whatever clients send.

use axum::http::StatusCode;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Upper bounds of the latency histogram's buckets, in seconds.
pub const LATENCY_BUCKETS_S: [f64; 12] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 10.0,
];

#[derive(Debug, Default)]
struct Histogram {
    buckets: [u64; LATENCY_BUCKETS_S.len()],
    count: u64,
    sum_s: f64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        for (bucket, bound) in self.buckets.iter_mut().zip(LATENCY_BUCKETS_S) {
            if seconds <= bound {
                *bucket += 1;
            }
        }
        self.count += 1;
        self.sum_s += seconds;
    }
}

/// The server's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    latency: Mutex<BTreeMap<String, Histogram>>,
    ingested: AtomicU64,
    auth_failures: AtomicU64,
    throttled: AtomicU64,
}

impl Metrics {
    /// Counts one answered request.
    pub fn observe(&self, route: &str, method: &str, status: StatusCode, seconds: f64) {
        if let Ok(mut requests) = self.requests.lock() {
            *requests
                .entry((route.to_owned(), method.to_owned(), status.as_u16()))
                .or_default() += 1;
        }
        if let Ok(mut latency) = self.latency.lock() {
            latency
                .entry(route.to_owned())
                .or_default()
                .observe(seconds);
        }
        if status == StatusCode::TOO_MANY_REQUESTS {
            self.throttled.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts a run newly stored by a push.
    pub fn ingested(&self, runs: u64) {
        self.ingested.fetch_add(runs, Ordering::Relaxed);
    }

    /// Counts a wrong token.
    pub fn auth_failed(&self) {
        self.auth_failures.fetch_add(1, Ordering::Relaxed);
    }

    /// Everything, in Prometheus' text format.
    #[must_use]
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str("# HELP bench_web_requests_total Requests answered.\n");
        out.push_str("# TYPE bench_web_requests_total counter\n");
        if let Ok(requests) = self.requests.lock() {
            for ((route, method, status), n) in requests.iter() {
                let _ = writeln!(
                    out,
                    "bench_web_requests_total{{route=\"{}\",method=\"{}\",status=\"{status}\"}} {n}",
                    escape(route),
                    escape(method)
                );
            }
        }
        out.push_str("# HELP bench_web_request_duration_seconds Time to answer a request.\n");
        out.push_str("# TYPE bench_web_request_duration_seconds histogram\n");
        if let Ok(latency) = self.latency.lock() {
            for (route, h) in latency.iter() {
                let route = escape(route);
                for (bound, n) in LATENCY_BUCKETS_S.iter().zip(h.buckets) {
                    let _ = writeln!(
                        out,
                        "bench_web_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {n}"
                    );
                }
                let _ = writeln!(
                    out,
                    "bench_web_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}\n\
                     bench_web_request_duration_seconds_sum{{route=\"{route}\"}} {}\n\
                     bench_web_request_duration_seconds_count{{route=\"{route}\"}} {}",
                    h.count, h.sum_s, h.count
                );
            }
        }
        for (name, help, value) in [
            (
                "bench_web_ingested_runs_total",
                "Runs newly stored by pushes.",
                &self.ingested,
            ),
            (
                "bench_web_auth_failures_total",
                "Requests with a token that matches none.",
                &self.auth_failures,
            ),
            (
                "bench_web_throttled_total",
                "Requests answered 429 (too many at once, or too many wrong tokens).",
                &self.throttled,
            ),
        ] {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}",
                value.load(Ordering::Relaxed)
            );
        }
        out
    }
}

/// A label value with Prometheus' escapes.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn counters_and_histograms_render_as_prometheus_text() {
        let m = Metrics::default();
        m.observe("/runs/{id}", "GET", StatusCode::OK, 0.004);
        m.observe("/runs/{id}", "GET", StatusCode::OK, 0.2);
        m.observe("unmatched", "GET", StatusCode::TOO_MANY_REQUESTS, 0.0);
        m.ingested(3);
        m.auth_failed();
        let text = m.render();
        assert!(text.contains(
            "bench_web_requests_total{route=\"/runs/{id}\",method=\"GET\",status=\"200\"} 2"
        ));
        assert!(text.contains(
            "bench_web_request_duration_seconds_bucket{route=\"/runs/{id}\",le=\"0.005\"} 1"
        ));
        assert!(text.contains(
            "bench_web_request_duration_seconds_bucket{route=\"/runs/{id}\",le=\"0.25\"} 2"
        ));
        assert!(text.contains("bench_web_request_duration_seconds_count{route=\"/runs/{id}\"} 2"));
        assert!(text.contains("bench_web_ingested_runs_total 3"));
        assert!(text.contains("bench_web_auth_failures_total 1"));
        assert!(text.contains("bench_web_throttled_total 1"));
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
