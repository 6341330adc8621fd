//! Counts a minute long by sender (wrong keys, registrations, denials): one address, all of
//! loopback, or an IPv6 /64, each counted apart up to a bound.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

/// Counts a minute long, by source address: at most 1,024 addresses each, the rest
/// together (a flood of addresses cannot grow the map, nor wipe an address's count).
#[derive(Debug)]
pub struct Counts {
    since: Instant,
    /// Counted from every source this minute.
    pub all: u32,
    by_source: HashMap<String, u32>,
}

/// Source addresses counted at once.
pub const MAX_SOURCES: usize = 1024;

/// The addresses one sender can use as one (found by the hostile review: a hundred loopback
/// addresses gave a hundred times the wrong keys): all of loopback (`127.0.0.0/8`, `::1`),
/// and an IPv6 address's /64 (what one line or host is given).
fn one_sender(source: &str) -> String {
    use std::net::IpAddr;
    let ip = match source.parse::<IpAddr>() {
        Ok(IpAddr::V6(v6)) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        Ok(ip) => ip,
        Err(_) => return source.to_owned(),
    };
    match ip {
        // This machine, whichever loopback address it sends from (found by the re-check:
        // `::1` was counted apart from 127/8).
        ip if ip.is_loopback() => "this machine (loopback)".to_owned(),
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let [a, b, c, d, ..] = v6.segments();
            format!("{a:x}:{b:x}:{c:x}:{d:x}::/64")
        }
    }
}

impl Default for Counts {
    fn default() -> Self {
        Self::new()
    }
}

impl Counts {
    /// None counted yet.
    pub fn new() -> Self {
        Self {
            since: Instant::now(),
            all: 0,
            by_source: HashMap::new(),
        }
    }

    /// This minute's counts (a new minute starts them again).
    pub fn now(&mut self) -> &mut Self {
        if self.since.elapsed() > Duration::from_secs(60) {
            *self = Self::new();
        }
        self
    }

    /// The key `source` is counted under: itself, or, once [`MAX_SOURCES`] addresses are
    /// counted, one key all the others share (found by the hostile review: clearing the counts
    /// then let a thousand addresses wipe one address's).
    fn key(&self, source: &str) -> String {
        let source = one_sender(source);
        if self.by_source.len() >= MAX_SOURCES && !self.by_source.contains_key(&source) {
            "(the other addresses)".to_owned()
        } else {
            source
        }
    }

    /// How many were counted from `source` this minute.
    pub fn of(&self, source: &str) -> u32 {
        self.by_source.get(&self.key(source)).copied().unwrap_or(0)
    }

    /// `source`'s count forgotten (its sender's).
    pub fn forget(&mut self, source: &str) {
        let key = self.key(source);
        self.by_source.remove(&key);
    }

    /// How many senders are counted apart.
    pub fn senders(&self) -> usize {
        self.by_source.len()
    }

    /// One more from `source`.
    pub fn count(&mut self, source: &str) {
        self.all += 1;
        let key = self.key(source);
        *self.by_source.entry(key).or_default() += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the hostile review: a hundred loopback addresses gave a hundred times the
    /// wrong keys.
    #[test]
    fn one_sender_is_all_of_loopback_or_an_ipv6_64() {
        for (source, sender) in [
            ("127.0.0.1", "this machine (loopback)"),
            ("127.3.2.1", "this machine (loopback)"),
            ("::ffff:127.0.0.5", "this machine (loopback)"),
            ("::ffff:192.168.1.9", "192.168.1.9"),
            ("192.168.1.9", "192.168.1.9"),
            ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
            ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),
            ("::1", "this machine (loopback)"),
            ("?", "?"),
        ] {
            assert_eq!(one_sender(source), sender, "{source}");
        }
    }
}
