//! The fault-injection core of every emulator: a rate per kind of fault
//! (the kinds are each emulator's own enum), one seeded generator so that a
//! run can be reproduced, and a count per kind of what was injected. What a
//! fault does to a message stays with its emulator.

use std::marker::PhantomData;

use crate::seeded_rng::Rng;

/// The most kinds of fault one emulator has.
pub const MAX_KINDS: usize = 8;

/// An emulator's kinds of fault.
pub trait FaultKind: Copy + Eq + std::fmt::Debug + 'static {
    /// Every kind, in the order counts are printed (at most [`MAX_KINDS`]).
    const ALL: &'static [Self];
    /// As the counts print it.
    fn name(self) -> &'static str;

    fn index(self) -> usize {
        Self::ALL.iter().position(|k| *k == self).expect("a kind is in ALL")
    }
}

/// Rates are probabilities per message, 0..=1; `seed` reproduces a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultRates<K: FaultKind> {
    rates: [f64; MAX_KINDS],
    pub seed: u64,
    kind: PhantomData<K>,
}

impl<K: FaultKind> Default for FaultRates<K> {
    fn default() -> Self {
        assert!(K::ALL.len() <= MAX_KINDS, "at most {MAX_KINDS} kinds of fault");
        Self {
            rates: [0.0; MAX_KINDS],
            seed: 0,
            kind: PhantomData,
        }
    }
}

impl<K: FaultKind> FaultRates<K> {
    pub fn set(&mut self, kind: K, rate: f64) {
        self.rates[kind.index()] = rate;
    }

    /// The same rates, reproduced by `seed`.
    pub fn seeded(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The same rates with `kind` at `rate`.
    pub fn with(mut self, kind: K, rate: f64) -> Self {
        self.set(kind, rate);
        self
    }

    pub fn rate(&self, kind: K) -> f64 {
        self.rates[kind.index()]
    }

    pub fn any(&self) -> bool {
        self.rates.iter().any(|r| *r > 0.0)
    }
}

/// What an injector did, per kind: to check against a receiver's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultCounts<K: FaultKind> {
    counts: [u64; MAX_KINDS],
    kind: PhantomData<K>,
}

impl<K: FaultKind> Default for FaultCounts<K> {
    fn default() -> Self {
        Self {
            counts: [0; MAX_KINDS],
            kind: PhantomData,
        }
    }
}

impl<K: FaultKind> FaultCounts<K> {
    pub fn get(&self, kind: K) -> u64 {
        self.counts[kind.index()]
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// One more `kind` injected.
    pub fn note(&mut self, kind: K) {
        self.counts[kind.index()] += 1;
    }
}

impl<K: FaultKind> std::ops::AddAssign for FaultCounts<K> {
    /// Adds another injector's counts (one injector per stream).
    fn add_assign(&mut self, o: Self) {
        for (a, b) in self.counts.iter_mut().zip(o.counts) {
            *a += b;
        }
    }
}

impl<K: FaultKind> std::fmt::Display for FaultCounts<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, kind) in K::ALL.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            write!(f, "{sep}{} {}", kind.name(), self.get(*kind))?;
        }
        Ok(())
    }
}

/// Rolls the dice of one stream's faults and counts what they inject.
#[derive(Debug)]
pub struct Faults<K: FaultKind> {
    rates: FaultRates<K>,
    /// For what a fault does (how many bytes, which part).
    pub rng: Rng,
    pub counts: FaultCounts<K>,
}

impl<K: FaultKind> Faults<K> {
    /// `salt` tells apart streams of one run that share the seed.
    pub fn new(rates: FaultRates<K>, salt: u64) -> Self {
        Self {
            rates,
            rng: Rng::new(rates.seed ^ salt),
            counts: FaultCounts::default(),
        }
    }

    pub fn any(&self) -> bool {
        self.rates.any()
    }

    /// Whether `kind` strikes this message (counted when it does).
    pub fn roll(&mut self, kind: K) -> bool {
        self.roll_if(kind, true)
    }

    /// Whether `kind` strikes, not yet counted: for a fault that may find
    /// nothing to act on (count it with `counts.note` when it does).
    pub fn strikes(&mut self, kind: K) -> bool {
        self.rng.unit() < self.rates.rate(kind)
    }

    /// As [`Self::roll`], for a fault that applies only when `applies` (the
    /// dice are rolled either way, so that one message's shape does not
    /// shift the faults of the next).
    pub fn roll_if(&mut self, kind: K, applies: bool) -> bool {
        let hit = self.rng.unit() < self.rates.rate(kind) && applies;
        if hit {
            self.counts.note(kind);
        }
        hit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Kind {
        Junk,
        Loss,
    }

    impl FaultKind for Kind {
        const ALL: &'static [Self] = &[Kind::Junk, Kind::Loss];
        fn name(self) -> &'static str {
            match self {
                Kind::Junk => "junk",
                Kind::Loss => "lost",
            }
        }
    }

    #[test]
    fn rates_are_honoured_counted_and_reproducible() {
        let rates = FaultRates::default().with(Kind::Loss, 0.1);
        assert!(rates.any() && !FaultRates::<Kind>::default().any());
        let run = || {
            let mut f = Faults::new(rates.seeded(42), 7);
            let hits: Vec<bool> = (0..10_000).map(|_| f.roll(Kind::Loss) | f.roll(Kind::Junk)).collect();
            (hits, f.counts)
        };
        let (a, ca) = run();
        assert_eq!(run(), (a, ca));
        assert!((800..1200).contains(&ca.get(Kind::Loss)), "{ca}");
        assert_eq!(ca.get(Kind::Junk), 0);
        assert_eq!(ca.to_string(), format!("junk 0 lost {}", ca.get(Kind::Loss)));
        let mut total = ca;
        total += ca;
        assert_eq!(total.total(), 2 * ca.total());
        let mut f = Faults::new(FaultRates::default().with(Kind::Junk, 1.0), 0);
        assert!(!f.roll_if(Kind::Junk, false), "does not apply: not injected");
        assert_eq!(f.counts.total(), 0);
    }
}
