//! A timer that exists only while something is due: a loop ticking at a
//! fixed rate woke an idle bridge several times a second per stream (~4 ms
//! of CPU a second for one idle LiDAR); this one wakes it only for work.

use std::future::pending;
use std::pin::Pin;
use tokio::time::{Instant, Sleep};

/// A tokio sleep that a `select!` loop arms when its state says something
/// is due and that never fires while unarmed.
#[derive(Debug)]
pub struct Deadline {
    sleep: Pin<Box<Sleep>>,
    armed: bool,
}

impl Default for Deadline {
    fn default() -> Self {
        Self::new()
    }
}

impl Deadline {
    /// An unarmed deadline.
    pub fn new() -> Self {
        Self {
            sleep: Box::pin(tokio::time::sleep(std::time::Duration::ZERO)),
            armed: false,
        }
    }

    /// Arms it for `at` unless it is armed already (an armed deadline
    /// keeps its time until it fires: the loop re-examines its state
    /// then). `None`: nothing is due, it stays as it is.
    pub fn arm_if_unarmed(&mut self, at: Option<impl Into<Instant>>) {
        if let (false, Some(at)) = (self.armed, at) {
            self.sleep.as_mut().reset(at.into());
            self.armed = true;
        }
    }

    /// Whether it will fire.
    pub fn is_armed(&self) -> bool {
        self.armed
    }

    /// Completes when the armed time comes, and disarms; pending for ever
    /// while unarmed. Cancel-safe: dropped unfinished (another branch of a
    /// `select!` won), it stays armed for the same time.
    pub async fn fired(&mut self) {
        if !self.armed {
            pending::<()>().await;
        }
        self.sleep.as_mut().await;
        self.armed = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn unarmed_never_fires_and_armed_fires_once_at_its_time() {
        let mut deadline = Deadline::new();
        tokio::select! {
            _ = deadline.fired() => panic!("fired while unarmed"),
            _ = tokio::time::sleep(Duration::from_secs(3600)) => {}
        }
        let start = Instant::now();
        deadline.arm_if_unarmed(Some(start + Duration::from_millis(300)));
        // Re-arming an armed deadline keeps its first time.
        deadline.arm_if_unarmed(Some(start + Duration::from_secs(10)));
        assert!(deadline.is_armed());
        deadline.fired().await;
        let waited = start.elapsed();
        assert!(
            (Duration::from_millis(300)..Duration::from_millis(400)).contains(&waited),
            "{waited:?}"
        );
        assert!(!deadline.is_armed());
        tokio::select! {
            _ = deadline.fired() => panic!("fired twice"),
            _ = tokio::time::sleep(Duration::from_secs(3600)) => {}
        }
    }

    #[tokio::test(start_paused = true)]
    async fn losing_a_select_keeps_it_armed_and_nothing_due_leaves_it_unarmed() {
        let mut deadline = Deadline::new();
        deadline.arm_if_unarmed(None::<Instant>);
        assert!(!deadline.is_armed());
        deadline.arm_if_unarmed(Some(Instant::now() + Duration::from_secs(1)));
        tokio::select! {
            _ = deadline.fired() => panic!("fired early"),
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
        assert!(deadline.is_armed());
        deadline.fired().await;
        assert!(!deadline.is_armed());
    }
}
