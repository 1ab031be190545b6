//! Login throttling: failed logins are counted per username and per client address, and past a
//! few free failures each key is locked out for an exponentially growing time.
//!
//! An attempt is counted as failed *before* the password is checked and forgiven when it turns
//! out right, so a burst of parallel guesses cannot all slip past the first lock, and a
//! locked-out attempt is refused before any database lookup or argon2 hash. Memory is bounded:
//! each map holds at most `max_entries` keys; when full, lapsed entries go first, then the one
//! whose lock ends soonest.
//!
//! State sits behind a std `Mutex`: the lock is held for a few map operations and never across
//! an `.await`.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Usernames longer than this cannot exist (see `validate_username`); they are counted only
/// against the client address, so a key never costs more than this many bytes.
const MAX_USERNAME_KEY: usize = 64;

/// Login throttling settings.
#[derive(Clone, Debug)]
pub struct LoginThrottleConfig {
    /// Failed logins a username or an address may have before back-off starts.
    pub free_failures: u32,
    /// The first lock-out; every further failure doubles it.
    pub initial_backoff: Duration,
    /// The longest lock-out. A key's failures are forgotten once its lock has lapsed for this
    /// long (or, below the threshold, this long after its last failure).
    pub max_backoff: Duration,
    /// The most usernames, and separately the most addresses, tracked at once.
    pub max_entries: usize,
    /// Where "now" comes from: the system's monotonic clock, or a manual one in tests.
    pub clock: Clock,
}

impl Default for LoginThrottleConfig {
    fn default() -> Self {
        Self {
            free_failures: 5,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(15 * 60),
            max_entries: 10_000,
            clock: Clock::system(),
        }
    }
}

/// A monotonic clock that tests can move by hand, so back-off is tested without sleeping.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// `None`: the system clock. `Some`: a fixed start plus an offset that only `advance` moves.
    manual: Option<Arc<(Instant, Mutex<Duration>)>>,
}

impl Clock {
    pub fn system() -> Self {
        Self { manual: None }
    }

    /// A clock that stands still until [`Clock::advance`] moves it.
    pub fn manual() -> Self {
        Self {
            manual: Some(Arc::new((Instant::now(), Mutex::new(Duration::ZERO)))),
        }
    }

    /// Moves a manual clock forward; the system clock moves on its own and ignores this.
    pub fn advance(&self, by: Duration) {
        if let Some(manual) = &self.manual {
            let mut offset = manual.1.lock().unwrap_or_else(PoisonError::into_inner);
            *offset += by;
        }
    }

    pub fn now(&self) -> Instant {
        match &self.manual {
            None => Instant::now(),
            Some(manual) => manual.0 + *manual.1.lock().unwrap_or_else(PoisonError::into_inner),
        }
    }
}

/// The failed-login counters of one server.
#[derive(Debug)]
pub struct LoginThrottle {
    config: LoginThrottleConfig,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    users: Counters<String>,
    addresses: Counters<IpAddr>,
}

/// A login attempt that passed the throttle and has been counted as failed until
/// [`LoginThrottle::succeeded`] forgives it.
#[derive(Debug)]
pub struct Attempt {
    username: Option<String>,
    address: Option<IpAddr>,
    /// When the attempt was charged, and the address entry's previous last failure, so that a
    /// success can put the address back exactly as it was.
    at: Instant,
    address_last: Option<Instant>,
}

impl LoginThrottle {
    pub fn new(config: LoginThrottleConfig) -> Self {
        Self {
            config,
            state: Mutex::default(),
        }
    }

    /// Admits an attempt and counts it as failed, or refuses it with how long to wait.
    pub fn begin(&self, username: &str, address: Option<IpAddr>) -> Result<Attempt, Duration> {
        let now = self.config.clock.now();
        let username = (username.len() <= MAX_USERNAME_KEY).then(|| username.to_string());
        let address = address.map(address_key);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let wait = [
            username
                .as_ref()
                .and_then(|u| state.users.wait(u, now, &self.config)),
            address.and_then(|a| state.addresses.wait(&a, now, &self.config)),
        ]
        .into_iter()
        .flatten()
        .max();
        if let Some(wait) = wait {
            return Err(wait);
        }
        if let Some(u) = &username {
            state.users.fail(u.clone(), now, &self.config);
        }
        let address_last = address.and_then(|a| state.addresses.fail(a, now, &self.config));
        Ok(Attempt {
            username,
            address,
            at: now,
            address_last,
        })
    }

    /// The attempt's password was right: the username starts over and the address is put back
    /// as it was before the attempt. The address is not cleared, so logging in to one's own
    /// account between guesses at others does not reset the per-address count.
    pub fn succeeded(&self, attempt: Attempt) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(u) = &attempt.username {
            state.users.map.remove(u);
        }
        if let Some(a) = &attempt.address {
            state
                .addresses
                .forgive_one(a, attempt.at, attempt.address_last);
        }
    }
}

/// IPv6 clients usually own a whole /64, so one counts as one client; IPv4-mapped addresses
/// count as their IPv4 address.
fn address_key(address: IpAddr) -> IpAddr {
    match address.to_canonical() {
        IpAddr::V6(v6) => {
            let mut segments = v6.segments();
            segments[4..].fill(0);
            IpAddr::V6(segments.into())
        }
        v4 => v4,
    }
}

#[derive(Debug)]
struct Counters<K> {
    map: HashMap<K, Entry>,
}

impl<K> Default for Counters<K> {
    fn default() -> Self {
        Self {
            map: HashMap::new(),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    failures: u32,
    last: Instant,
}

impl Entry {
    fn locked_until(&self, config: &LoginThrottleConfig) -> Instant {
        let Some(over) = self.failures.checked_sub(config.free_failures) else {
            return self.last;
        };
        let backoff = config
            .initial_backoff
            .saturating_mul(1 << over.min(31))
            .min(config.max_backoff);
        self.last + backoff
    }

    fn is_stale(&self, now: Instant, config: &LoginThrottleConfig) -> bool {
        now >= self.locked_until(config) + config.max_backoff
    }
}

impl<K: Eq + Hash + Clone> Counters<K> {
    fn wait(&self, key: &K, now: Instant, config: &LoginThrottleConfig) -> Option<Duration> {
        let until = self.map.get(key)?.locked_until(config);
        (until > now).then(|| until - now)
    }

    /// Counts a failure; answers the entry's previous last failure, if it had one.
    fn fail(&mut self, key: K, now: Instant, config: &LoginThrottleConfig) -> Option<Instant> {
        if let Some(entry) = self.map.get_mut(&key) {
            // A key whose failures lapsed starts over rather than resuming its old count.
            if entry.is_stale(now, config) {
                *entry = Entry {
                    failures: 1,
                    last: now,
                };
                return None;
            }
            entry.failures = entry.failures.saturating_add(1);
            return Some(std::mem::replace(&mut entry.last, now));
        }
        if self.map.len() >= config.max_entries.max(1) {
            self.make_room(now, config);
        }
        self.map.insert(
            key,
            Entry {
                failures: 1,
                last: now,
            },
        );
        None
    }

    /// Takes back a failure charged at `at`. When no other failure came since, the entry's
    /// last failure goes back to `previous` too, so the lock is what it was before.
    fn forgive_one(&mut self, key: &K, at: Instant, previous: Option<Instant>) {
        if let Some(entry) = self.map.get_mut(key) {
            entry.failures = entry.failures.saturating_sub(1);
            if entry.failures == 0 {
                self.map.remove(key);
            } else if let Some(previous) = previous.filter(|_| entry.last == at) {
                entry.last = previous;
            }
        }
    }

    /// Drops lapsed entries; if none had lapsed, the one whose lock ends soonest (it protects
    /// the least). Linear, but only on a full map, and far cheaper than the hash it spares.
    fn make_room(&mut self, now: Instant, config: &LoginThrottleConfig) {
        let before = self.map.len();
        self.map.retain(|_, entry| !entry.is_stale(now, config));
        if self.map.len() < before {
            return;
        }
        let weakest = self
            .map
            .iter()
            .min_by_key(|(_, entry)| (entry.locked_until(config), entry.failures))
            .map(|(key, _)| key.clone());
        if let Some(weakest) = weakest {
            self.map.remove(&weakest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throttle(clock: &Clock) -> LoginThrottle {
        LoginThrottle::new(LoginThrottleConfig {
            free_failures: 3,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
            max_entries: 4,
            clock: clock.clone(),
        })
    }

    const HOME: Option<IpAddr> = Some(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));

    #[test]
    fn back_off_doubles_up_to_the_maximum_then_lapses() {
        let clock = Clock::manual();
        let t = throttle(&clock);
        for _ in 0..3 {
            assert!(t.begin("alice", None).is_ok());
        }
        assert_eq!(t.begin("alice", None).err(), Some(Duration::from_secs(1)));
        let mut expected = 1;
        for _ in 0..8 {
            clock.advance(Duration::from_secs(expected));
            assert!(t.begin("alice", None).is_ok());
            expected = (expected * 2).min(60);
            assert_eq!(
                t.begin("alice", None).err(),
                Some(Duration::from_secs(expected))
            );
        }
        // Once the lock has lapsed for `max_backoff`, the count starts over.
        clock.advance(Duration::from_secs(120));
        for _ in 0..3 {
            assert!(t.begin("alice", None).is_ok());
        }
        assert!(t.begin("alice", None).is_err());
    }

    #[test]
    fn success_clears_the_username_but_not_the_address() {
        let clock = Clock::manual();
        let t = throttle(&clock);
        for name in ["a", "b"] {
            assert!(t.begin(name, HOME).is_ok());
        }
        let ok = t.begin("mine", HOME);
        t.succeeded(ok.unwrap_or_else(|_| panic!("admitted")));
        // Two failures are still on the address; the third locks it, whatever the username.
        assert!(t.begin("c", HOME).is_ok());
        assert!(t.begin("mine", HOME).is_err());
        assert!(
            t.begin("mine", None).is_ok(),
            "the username itself is clear"
        );
    }

    #[test]
    fn a_success_after_the_back_off_leaves_the_address_as_it_was() {
        let clock = Clock::manual();
        let t = throttle(&clock);
        for name in ["a", "b", "c"] {
            assert!(t.begin(name, HOME).is_ok());
        }
        assert!(t.begin("mine", HOME).is_err());
        clock.advance(Duration::from_secs(1));
        let ok = t.begin("mine", HOME);
        t.succeeded(ok.unwrap_or_else(|_| panic!("admitted after the back-off")));
        // The success did not restart the lock: a second login right away is admitted too.
        let again = t.begin("mine", HOME);
        t.succeeded(again.unwrap_or_else(|_| panic!("admitted again")));
    }

    #[test]
    fn ipv6_clients_count_per_slash_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1"
            .parse()
            .unwrap_or(IpAddr::from([0; 16]));
        let b: IpAddr = "2001:db8:1:2:bbbb::2"
            .parse()
            .unwrap_or(IpAddr::from([0; 16]));
        assert_eq!(address_key(a), address_key(b));
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap_or(IpAddr::from([0; 16]));
        assert_eq!(address_key(mapped), IpAddr::from([10, 0, 0, 1]));
    }

    #[test]
    fn the_maps_stay_bounded_and_keep_the_most_locked_keys() {
        let clock = Clock::manual();
        let t = throttle(&clock);
        for _ in 0..5 {
            let _ = t.begin("victim", None);
        }
        for i in 0..100 {
            let _ = t.begin(&format!("spray-{i}"), None);
        }
        let state = t.state.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(state.users.map.len() <= 4);
        assert!(state.users.map.contains_key("victim"));
    }

    #[test]
    fn overlong_usernames_are_not_stored() {
        let t = throttle(&Clock::manual());
        let _ = t.begin(&"x".repeat(10_000), HOME);
        let state = t.state.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(state.users.map.is_empty());
        assert_eq!(state.addresses.map.len(), 1);
    }
}
