//! What keeps one client from taking the server: limits on time, on concurrent pushes and on
//! failed logins. Request sizes are limited where bodies are read ([`crate::ingest`],
//! [`crate::artifacts`]).
//!
//! | what | limit | answer |
//! |---|---|---|
//! | request head (slow headers, slowloris) | [`Limits::header_timeout`] from the first byte | 408, connection closed ([`crate::serve`]) |
//! | idle keep-alive connection | [`Limits::header_timeout`] | connection closed |
//! | a push's body | [`Limits::body_timeout`] | 408, nothing stored |
//! | pushes being read or stored at once | [`Limits::max_concurrent_pushes`] | 429 with `Retry-After`, nothing stored |
//! | wrong tokens from one address | [`Limits::auth_failures`] per [`AUTH_WINDOW`] | 429 with `Retry-After` until the window ends, without checking the token |
//! | a whole request | [`crate::REQUEST_TIMEOUT`] | 503 |

use crate::error::AppError;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The window in which failed logins from one address are counted.
pub const AUTH_WINDOW: Duration = Duration::from_secs(60);

/// Addresses whose failures are remembered at most (memory stays bounded under a spread
/// attack; beyond it, failures are not counted until windows expire).
pub const MAX_TRACKED_ADDRESSES: usize = 100_000;

/// The server's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long a client may take to send a request's head, and how long a keep-alive
    /// connection may stay idle.
    pub header_timeout: Duration,
    /// How long a push's body may take to arrive.
    pub body_timeout: Duration,
    /// Pushes read and stored at once.
    pub max_concurrent_pushes: usize,
    /// Wrong tokens one address may present per [`AUTH_WINDOW`].
    pub auth_failures: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_concurrent_pushes: 16,
            auth_failures: 20,
        }
    }
}

/// Failed logins per client address, in fixed windows of [`AUTH_WINDOW`].
#[derive(Debug)]
pub struct AuthThrottle {
    allowed: u32,
    window: Duration,
    failures: Mutex<HashMap<IpAddr, (Instant, u32)>>,
}

impl AuthThrottle {
    /// A throttle allowing `allowed` failures per `window`.
    #[must_use]
    pub fn new(allowed: u32, window: Duration) -> Self {
        Self {
            allowed,
            window,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// Refuses a client that failed too often in its current window. Clients without an
    /// address (requests not from a socket: tests, in-process callers) are never throttled.
    ///
    /// # Errors
    /// [`AppError::TooManyRequests`], with the seconds left in the window.
    pub fn check(&self, peer: Option<IpAddr>) -> Result<(), AppError> {
        let Some(peer) = peer else { return Ok(()) };
        let Ok(failures) = self.failures.lock() else {
            return Ok(());
        };
        match failures.get(&peer) {
            Some(&(started, count)) if count >= self.allowed => {
                let left = self.window.saturating_sub(started.elapsed());
                if left.is_zero() {
                    return Ok(());
                }
                Err(AppError::TooManyRequests {
                    message: format!(
                        "too many wrong tokens from {peer}; try again in {} s",
                        left.as_secs().max(1)
                    ),
                    retry_after_s: left.as_secs().max(1),
                })
            }
            _ => Ok(()),
        }
    }

    /// Counts a wrong token from `peer`.
    pub fn failed(&self, peer: Option<IpAddr>) {
        let Some(peer) = peer else { return };
        let Ok(mut failures) = self.failures.lock() else {
            return;
        };
        let now = Instant::now();
        if failures.len() >= MAX_TRACKED_ADDRESSES && !failures.contains_key(&peer) {
            failures.retain(|_, (started, _)| now.duration_since(*started) < self.window);
            if failures.len() >= MAX_TRACKED_ADDRESSES {
                return;
            }
        }
        let entry = failures.entry(peer).or_insert((now, 0));
        if now.duration_since(entry.0) >= self.window {
            *entry = (now, 0);
        }
        entry.1 = entry.1.saturating_add(1);
    }
}

/// Slots for pushes being read and stored; a push that finds none is answered 429 at once
/// rather than queued, so a flood of pushes cannot hold every connection.
#[derive(Debug, Clone)]
pub struct PushSlots {
    slots: usize,
    free: std::sync::Arc<Semaphore>,
}

impl PushSlots {
    /// `slots` pushes at once (at least one).
    #[must_use]
    pub fn new(slots: usize) -> Self {
        let slots = slots.max(1);
        Self {
            slots,
            free: std::sync::Arc::new(Semaphore::new(slots)),
        }
    }

    /// How many pushes are being received or recorded now.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.slots.saturating_sub(self.free.available_permits())
    }

    /// A slot, held until the push is answered.
    ///
    /// # Errors
    /// [`AppError::TooManyRequests`] when every slot is taken.
    pub fn take(&self) -> Result<OwnedSemaphorePermit, AppError> {
        std::sync::Arc::clone(&self.free)
            .try_acquire_owned()
            .map_err(|_| AppError::TooManyRequests {
                message: "too many pushes at once; retry in a second".to_owned(),
                retry_after_s: 1,
            })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_refused_after_its_failures_until_the_window_ends() {
        let throttle = AuthThrottle::new(3, Duration::from_millis(200));
        let (a, b) = (
            Some(IpAddr::from([10, 0, 0, 1])),
            Some(IpAddr::from([10, 0, 0, 2])),
        );
        for _ in 0..3 {
            throttle.check(a).unwrap();
            throttle.failed(a);
        }
        let refused = throttle.check(a).unwrap_err();
        assert_eq!(refused.public().status.as_u16(), 429);
        throttle.check(b).unwrap();
        throttle.check(None).unwrap();
        throttle.failed(None);
        std::thread::sleep(Duration::from_millis(250));
        throttle.check(a).unwrap();
        throttle.failed(a);
        throttle.check(a).unwrap();
    }

    #[test]
    fn push_slots_refuse_beyond_their_number_and_free_on_drop() {
        let slots = PushSlots::new(2);
        let first = slots.take().unwrap();
        let _second = slots.take().unwrap();
        assert_eq!(slots.take().unwrap_err().public().status.as_u16(), 429);
        drop(first);
        let _third = slots.take().unwrap();
    }
}
