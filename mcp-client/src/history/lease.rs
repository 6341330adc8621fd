//! One writer per conversation. A chat claims its conversation (a row of `leases`, taken in an
//! IMMEDIATE transaction, so two chats claiming at once take turns) before it loads or writes
//! it, renews the claim every [`HEARTBEAT`] while it runs, and gives it up when it ends. A
//! claim is free to take again when its holder is gone: at once when the holder ran on this
//! machine and its process is no longer running (a chat that crashed or was killed), and
//! after [`STALE_AFTER`] without renewal wherever it ran (another machine sharing the file, a
//! process id since reused). Every write checks, in its own transaction, that its
//! conversation is still its holder's: a chat whose claim was taken over stores nothing more
//! instead of interleaving with the new holder.

use std::time::Duration;

use rusqlite::{Connection, OptionalExtension as _, TransactionBehavior, params};

/// How often a holder renews its claims.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(10);

/// A claim not renewed for this long may be taken over, wherever its holder runs.
pub const STALE_AFTER: Duration = Duration::from_secs(60);

/// This process, as the holder of its claims.
#[derive(Debug, Clone)]
pub(crate) struct Holder {
    /// Unique to this store: a process opening two stores holds through each separately.
    pub(crate) token: String,
    pub(crate) pid: u32,
    pub(crate) host: String,
}

impl Holder {
    pub(crate) fn me() -> Self {
        use std::hash::{BuildHasher as _, Hasher as _};
        let random = std::hash::RandomState::new().build_hasher().finish();
        let pid = std::process::id();
        Self {
            token: format!("{pid}-{random:016x}"),
            pid,
            host: hostname(),
        }
    }
}

/// The machine's name, to tell whether a holder's process id can be looked up here.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_default()
}

/// A claim held by another chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The holder's process id.
    pub pid: u32,
    /// The machine it runs on (its host name).
    pub host: String,
    /// It runs on this machine.
    pub here: bool,
    /// When it took the conversation (RFC 3339, UTC).
    pub taken_at: String,
    /// Seconds since it last renewed the claim.
    pub silent_for: u64,
}

impl Claim {
    /// "process 4242 on this machine, since 2026-11-26 05:46:16 UTC, last heard from 3 s ago"
    pub(crate) fn describe(&self) -> String {
        let place = if self.here {
            "on this machine".to_owned()
        } else if self.host.is_empty() {
            "on another machine".to_owned()
        } else {
            format!("on host `{}`", self.host)
        };
        let since = self.taken_at.parse::<jiff::Timestamp>().map_or_else(
            |_| self.taken_at.clone(),
            |t| t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string(),
        );
        format!(
            "process {} {place}, since {since}, last heard from {} s ago",
            self.pid, self.silent_for
        )
    }
}

/// A row of `leases`.
struct Lease {
    holder: String,
    pid: u32,
    host: String,
    taken_at: String,
    heartbeat_at: i64,
}

impl Lease {
    fn claim(&self, me: &Holder, now: i64) -> Claim {
        Claim {
            pid: self.pid,
            host: self.host.clone(),
            here: self.here(me),
            taken_at: self.taken_at.clone(),
            silent_for: u64::try_from(now.saturating_sub(self.heartbeat_at)).unwrap_or(0),
        }
    }

    fn here(&self, me: &Holder) -> bool {
        !self.host.is_empty() && self.host == me.host
    }

    /// Whether its holder is gone: a process of this machine no longer running, or no
    /// renewal for [`STALE_AFTER`].
    fn stale(&self, me: &Holder, now: i64) -> bool {
        let silent = now.saturating_sub(self.heartbeat_at);
        silent > i64::try_from(STALE_AFTER.as_secs()).unwrap_or(i64::MAX)
            || (self.here(me) && !running(self.pid))
    }
}

/// Whether process `pid` of this machine runs (a zombie does not).
pub(crate) fn running(pid: u32) -> bool {
    let Some(process) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(process) {
        Ok(()) | Err(rustix::io::Errno::PERM) => {}
        Err(rustix::io::Errno::SRCH) => return false,
        // Cannot tell: taken as running (the claim then waits for STALE_AFTER).
        Err(_) => return true,
    }
    // "pid (name) S ...": the state follows the last parenthesis.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_none_or(|state| state != "Z" && state != "X")
    })
}

/// Seconds since the Unix epoch.
pub(crate) fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

fn lease(connection: &Connection, conversation: &str) -> rusqlite::Result<Option<Lease>> {
    connection
        .query_row(
            "SELECT holder, pid, host, taken_at, heartbeat_at FROM leases WHERE conversation_id = ?1",
            [conversation],
            |row| {
                Ok(Lease {
                    holder: row.get(0)?,
                    pid: row.get(1)?,
                    host: row.get(2)?,
                    taken_at: row.get(3)?,
                    heartbeat_at: row.get(4)?,
                })
            },
        )
        .optional()
}

/// Claims `conversation` for `me`: `Ok(Err(claim))` when another chat holds it.
pub(crate) fn claim(
    connection: &mut Connection,
    conversation: &str,
    me: &Holder,
    now: i64,
) -> rusqlite::Result<Result<(), Claim>> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if let Some(held) = lease(&transaction, conversation)?
        && held.holder != me.token
    {
        if !held.stale(me, now) {
            return Ok(Err(held.claim(me, now)));
        }
        tracing::info!(
            conversation,
            pid = held.pid,
            host = held.host,
            "taking over a conversation whose chat is gone"
        );
    }
    transaction.execute(
        "INSERT OR REPLACE INTO leases (conversation_id, holder, pid, host, taken_at, heartbeat_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            conversation,
            me.token,
            me.pid,
            me.host,
            jiff::Timestamp::now().to_string(),
            now
        ],
    )?;
    transaction.commit()?;
    Ok(Ok(()))
}

/// Why a write may not go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// We claimed it, and it is no longer ours (taken over, and maybe given up since).
    TakenOver(Option<Claim>),
    /// We did not claim it, and another chat holds it.
    Held(Claim),
}

/// Whether `me` may write `conversation` now (inside the write's transaction): ours when
/// `claimed`, else nobody else's.
pub(crate) fn check(
    connection: &Connection,
    conversation: &str,
    me: &Holder,
    claimed: bool,
    now: i64,
) -> rusqlite::Result<Result<(), Refused>> {
    let held = lease(connection, conversation)?;
    Ok(match held {
        Some(held) if held.holder == me.token => Ok(()),
        Some(held) if claimed => Err(Refused::TakenOver(Some(held.claim(me, now)))),
        None if claimed => Err(Refused::TakenOver(None)),
        Some(held) if !held.stale(me, now) => Err(Refused::Held(held.claim(me, now))),
        _ => Ok(()),
    })
}

/// Renews every claim of `me`; returns how many it still holds.
pub(crate) fn renew(connection: &Connection, me: &Holder, now: i64) -> rusqlite::Result<usize> {
    connection.execute(
        "UPDATE leases SET heartbeat_at = ?1 WHERE holder = ?2",
        params![now, me.token],
    )
}

/// Gives up every claim of `me`.
pub(crate) fn release(connection: &Connection, me: &Holder) -> rusqlite::Result<usize> {
    connection.execute("DELETE FROM leases WHERE holder = ?1", [&me.token])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database() -> Connection {
        let mut connection = Connection::open_in_memory().unwrap();
        crate::history::schema::migrate(&mut connection).unwrap();
        connection
    }

    fn other(pid: u32, host: &str) -> Holder {
        Holder {
            token: format!("other-{pid}"),
            pid,
            host: host.to_owned(),
        }
    }

    /// A process id that ran here and has ended.
    fn ended_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn a_claim_is_refused_while_its_holder_lives_and_taken_over_when_it_is_gone() {
        let mut connection = database();
        let me = Holder::me();
        let t = 1_000_000;
        // A live holder on this machine (this very process, through another store).
        let alive = other(std::process::id(), &me.host);
        assert_eq!(claim(&mut connection, "c", &alive, t).unwrap(), Ok(()));
        let refused = claim(&mut connection, "c", &me, t + 5)
            .unwrap()
            .unwrap_err();
        assert_eq!(refused.pid, std::process::id());
        assert!(refused.here);
        assert_eq!(refused.silent_for, 5);
        assert!(
            refused.describe().starts_with(&format!(
                "process {} on this machine, since ",
                std::process::id()
            )),
            "{}",
            refused.describe()
        );
        // The same holder may claim again (a renewal).
        assert_eq!(claim(&mut connection, "c", &alive, t + 6).unwrap(), Ok(()));
        // Not renewed for longer than STALE_AFTER: free, even though the process runs.
        let later = t + 6 + i64::try_from(STALE_AFTER.as_secs()).unwrap() + 1;
        assert_eq!(claim(&mut connection, "c", &me, later).unwrap(), Ok(()));
        // The old holder's writes are refused from now on; ours go through.
        assert_eq!(
            check(&connection, "c", &alive, true, later).unwrap(),
            Err(Refused::TakenOver(Some(Claim {
                pid: me.pid,
                host: me.host.clone(),
                here: !me.host.is_empty(),
                taken_at: lease(&connection, "c").unwrap().unwrap().taken_at,
                silent_for: 0,
            })))
        );
        assert_eq!(check(&connection, "c", &me, true, later).unwrap(), Ok(()));
        // Someone who never claimed it may not write it while it is held.
        assert!(matches!(
            check(&connection, "c", &other(1, "elsewhere"), false, later).unwrap(),
            Err(Refused::Held(_))
        ));
        // Given up: free to anyone; the one who had it is told it is no longer its.
        assert_eq!(release(&connection, &me).unwrap(), 1);
        assert_eq!(
            check(&connection, "c", &me, true, later).unwrap(),
            Err(Refused::TakenOver(None))
        );
        assert_eq!(
            check(&connection, "c", &other(1, "elsewhere"), false, later).unwrap(),
            Ok(())
        );
    }

    #[test]
    fn a_holder_of_this_machine_that_ended_frees_its_claim_at_once() {
        let mut connection = database();
        let me = Holder::me();
        let dead = other(ended_pid(), &me.host);
        assert_eq!(claim(&mut connection, "c", &dead, 100).unwrap(), Ok(()));
        assert_eq!(claim(&mut connection, "c", &me, 101).unwrap(), Ok(()));
        // One on another machine cannot be looked up: it waits for STALE_AFTER.
        let remote = other(ended_pid(), "another-host");
        assert_eq!(claim(&mut connection, "d", &remote, 100).unwrap(), Ok(()));
        let refused = claim(&mut connection, "d", &me, 130).unwrap().unwrap_err();
        assert!(!refused.here);
        assert!(
            refused
                .describe()
                .contains(" on host `another-host`, since "),
            "{}",
            refused.describe()
        );
        assert_eq!(claim(&mut connection, "d", &me, 161).unwrap(), Ok(()));
    }

    #[test]
    fn renewing_keeps_a_claim_fresh_and_says_how_many_are_held() {
        let mut connection = database();
        let me = Holder::me();
        assert_eq!(claim(&mut connection, "a", &me, 100).unwrap(), Ok(()));
        assert_eq!(claim(&mut connection, "b", &me, 100).unwrap(), Ok(()));
        assert_eq!(renew(&connection, &me, 150).unwrap(), 2);
        // Renewed at 150: still held at 200 against a live holder of another machine.
        let remote = other(4242, "another-host");
        assert!(claim(&mut connection, "a", &remote, 200).unwrap().is_err());
        assert!(running(std::process::id()));
        assert!(!running(ended_pid()));
        assert!(!running(0));
    }
}
