//! A one-place mailbox: the receiver keeps only the newest item, so a slow
//! consumer (a subscriber decoding raw images, DDS under load) costs old
//! frames, never memory or latency.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

#[derive(Debug)]
pub struct Latest<T> {
    slot: Mutex<Option<T>>,
    ready: Condvar,
}

impl<T> Default for Latest<T> {
    fn default() -> Self {
        Latest {
            slot: Mutex::new(None),
            ready: Condvar::new(),
        }
    }
}

impl<T> Latest<T> {
    /// Puts `item` in; returns the one it replaced, which nobody took.
    pub fn put(&self, item: T) -> Option<T> {
        let replaced = self.slot.lock().unwrap_or_else(|e| e.into_inner()).replace(item);
        self.ready.notify_one();
        replaced
    }

    /// The newest item, waiting at most `timeout` for one.
    pub fn take(&self, timeout: Duration) -> Option<T> {
        let slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        let (mut slot, _) = self
            .ready
            .wait_timeout_while(slot, timeout, |s| s.is_none())
            .unwrap_or_else(|e| e.into_inner());
        slot.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn keeps_only_the_newest() {
        let l = Latest::default();
        assert_eq!(l.put(1), None);
        assert_eq!(l.put(2), Some(1));
        assert_eq!(l.put(3), Some(2));
        assert_eq!(l.take(Duration::ZERO), Some(3));
        assert_eq!(l.take(Duration::from_millis(10)), None);
    }

    #[test]
    fn a_waiting_taker_wakes_on_put() {
        let l = Arc::new(Latest::default());
        let l2 = l.clone();
        let t = Instant::now();
        let h = std::thread::spawn(move || l2.take(Duration::from_secs(5)));
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(l.put("x"), None);
        assert_eq!(h.join().unwrap(), Some("x"));
        assert!(t.elapsed() < Duration::from_secs(2));
    }
}
