//! The book of clients and grants (`oauth.json` in the state directory), shared by every
//! server process on that directory: each keeps a copy, looks at the file's stamp at most once
//! a [`RELOAD_EVERY`] and reads it again when it changed, and changes it only holding the
//! directory (read again, change, write, let go). A grant revoked by one process is so in
//! every other within [`RELOAD_EVERY`].

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use serde::{Deserialize, Serialize};

use crate::state::{Stamp, StateDir, StateError};

use super::scope::Scopes;

/// The file.
pub const BOOK_FILE: &str = "oauth.json";

/// How often a process looks whether another changed the book.
pub const RELOAD_EVERY: Duration = Duration::from_secs(1);

/// A client registered (RFC 7591).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Client {
    /// Its `client_id`.
    pub id: String,
    /// The name it gave itself (cleaned): its own claim.
    pub name: String,
    /// Where it may send the person back, exactly.
    pub redirect_uris: Vec<String>,
    /// When, Unix seconds.
    pub registered_at: u64,
}

/// A code issued at the owner's approval, until it is redeemed (it is kept as its digest).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Code {
    /// SHA-256 of the code.
    pub digest: String,
    /// The PKCE S256 challenge it was asked with.
    pub challenge: String,
    /// The redirect URI it was asked with (the token request must name the same).
    pub redirect_uri: String,
    /// Until when it may be redeemed, Unix seconds.
    pub expires_at: u64,
    /// Redeemed already: a second try is a replay, and ends the grant.
    pub redeemed: bool,
}

/// What the owner let one client do.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Grant {
    /// Its id (in its tokens).
    pub id: String,
    /// The client's id.
    pub client_id: String,
    /// The client's name when granted (its own claim).
    pub client_name: String,
    /// The scopes granted.
    pub scopes: Scopes,
    /// When, Unix seconds.
    pub granted_at: u64,
    /// When a token of it was last issued (a sign-in or a refresh), Unix seconds.
    pub last_used_at: u64,
    /// From which address that was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_from: Option<String>,
    /// The code, until it is redeemed (kept after, to tell a replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Code>,
    /// SHA-256 of the refresh token that is valid now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh: Option<String>,
    /// SHA-256 of the refresh tokens used already (the last few): one used again ends the
    /// grant (a stolen token, or a client that kept an old one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retired: Vec<String>,
}

impl Serialize for Scopes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Scopes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text)
            .map_err(|word| serde::de::Error::custom(format!("{word:?} is not a scope")))
    }
}

/// What the file holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Records {
    /// Clients registered.
    #[serde(default)]
    pub clients: Vec<Client>,
    /// Grants given.
    #[serde(default)]
    pub grants: Vec<Grant>,
    /// The owner's sessions on the page of grants: each signs this with its expiry, and a
    /// sign-out replaces it, ending every session begun before, in every browser and process.
    #[serde(default)]
    pub owner_generation: String,
}

impl Records {
    /// The client `id`.
    pub fn client(&self, id: &str) -> Option<&Client> {
        self.clients.iter().find(|client| client.id == id)
    }

    /// The grant `id`.
    pub fn grant_mut(&mut self, id: &str) -> Option<&mut Grant> {
        self.grants.iter_mut().find(|grant| grant.id == id)
    }

    /// Ends the grant `id`; whether there was one.
    pub fn revoke(&mut self, id: &str) -> bool {
        let before = self.grants.len();
        self.grants.retain(|grant| grant.id != id);
        self.grants.len() != before
    }
}

/// Whether `client_id` names a metadata document rather than a registration.
pub fn is_document_url(client_id: &str) -> bool {
    client_id.starts_with("https://")
}

/// This process's copy of the book, and the way to change it.
#[derive(Debug)]
pub struct Book {
    state: StateDir,
    copy: Mutex<Copy>,
    /// When the file's stamp was last looked at, milliseconds since `epoch`.
    looked_at: AtomicU64,
    epoch: std::time::Instant,
}

#[derive(Debug)]
struct Copy {
    stamp: Stamp,
    records: Records,
    /// Each grant as every request's check needs it.
    live: HashMap<String, LiveGrant>,
}

/// A grant as each request's check reads it.
#[derive(Debug, Clone)]
pub struct LiveGrant {
    /// What it lets the client do.
    pub scopes: Scopes,
    /// The client's name (its own claim).
    pub client: Arc<str>,
    /// The client's id.
    pub client_id: Arc<str>,
}

impl Copy {
    fn of(stamp: Stamp, records: Records) -> Self {
        let live = records
            .grants
            .iter()
            .map(|grant| {
                (
                    grant.id.clone(),
                    LiveGrant {
                        scopes: grant.scopes,
                        client: Arc::from(grant.client_name.as_str()),
                        client_id: Arc::from(grant.client_id.as_str()),
                    },
                )
            })
            .collect();
        Self {
            stamp,
            records,
            live,
        }
    }
}

impl Book {
    /// The book in `state`, read now.
    ///
    /// # Errors
    /// The file cannot be read as a book.
    pub fn open(state: StateDir) -> Result<Self, StateError> {
        let stamp = state.stamp(BOOK_FILE);
        let records = state.read_json(BOOK_FILE)?;
        Ok(Self {
            state,
            copy: Mutex::new(Copy::of(stamp, records)),
            looked_at: AtomicU64::new(0),
            epoch: std::time::Instant::now(),
        })
    }

    fn copy(&self) -> std::sync::MutexGuard<'_, Copy> {
        self.copy.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads the file again if another process changed it, looking at most once a
    /// [`RELOAD_EVERY`]. A file that became unreadable keeps the last copy, with an error
    /// logged (refusing every client for a moment's bad file would be worse than a copy at
    /// most as old as the last good one; revocations written since are missed until it is
    /// fixed, which the log says).
    fn refresh(&self) {
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        let looked = self.looked_at.load(Ordering::Relaxed);
        let every = u64::try_from(RELOAD_EVERY.as_millis()).unwrap_or(u64::MAX);
        if looked != 0 && now.saturating_sub(looked) < every {
            return;
        }
        self.looked_at.store(now.max(1), Ordering::Relaxed);
        let stamp = self.state.stamp(BOOK_FILE);
        if stamp == self.copy().stamp {
            return;
        }
        match self.state.read_json::<Records>(BOOK_FILE) {
            Ok(records) => *self.copy() = Copy::of(stamp, records),
            Err(err) => {
                tracing::error!(error = %err, "the OAuth grants could not be read again: using the last copy read")
            }
        }
    }

    /// Looks at the file at the next read, however recently it was looked at (tests of what
    /// another process wrote).
    #[cfg(test)]
    pub fn look_now(&self) {
        self.looked_at.store(0, Ordering::Relaxed);
    }

    /// The scopes of the grant `id` and its client's name, as the book has them now; `None`
    /// when it is not (or no longer) granted.
    pub fn live(&self, id: &str) -> Option<LiveGrant> {
        self.refresh();
        self.copy().live.get(id).cloned()
    }

    /// Whether the client `client_id` holds a grant, as the book has it now.
    pub fn client_holds_grant(&self, client_id: &str) -> bool {
        self.refresh();
        self.copy()
            .live
            .values()
            .any(|grant| &*grant.client_id == client_id)
    }

    /// Whether the grant `id` is in the book now, looking at the file's stamp whatever the
    /// last look (a grant another process made a moment ago counts): what a token request
    /// checks before it holds the state directory, so that an unknown id costs a `stat`.
    pub fn has_grant_now(&self, id: &str) -> bool {
        self.looked_at.store(0, Ordering::Relaxed);
        self.live(id).is_some()
    }

    /// Whether `client_id` is registered (or kept from its document), looking at the file's
    /// stamp whatever the last look: a client another process registered a moment ago counts.
    pub fn knows_client(&self, client_id: &str) -> bool {
        self.looked_at.store(0, Ordering::Relaxed);
        self.refresh();
        self.copy().records.client(client_id).is_some()
    }

    /// The owner's sessions' generation, as the book has it now.
    pub fn owner_generation(&self) -> String {
        self.refresh();
        self.copy().records.owner_generation.clone()
    }

    /// The scopes of the grant `id` now.
    #[cfg(test)]
    pub fn scopes_of(&self, id: &str) -> Option<Scopes> {
        self.live(id).map(|grant| grant.scopes)
    }

    /// A copy of the records as they are now.
    pub fn records(&self) -> Records {
        self.refresh();
        self.copy().records.clone()
    }

    /// Changes the book with `change`, holding the state directory: the file is read again
    /// first, and written only when `change` says so (returns `Ok((true, …))`).
    ///
    /// # Errors
    /// The directory cannot be held, or the file read or written; or `change`'s own error.
    pub fn change<T, E: From<StateError>>(
        &self,
        change: impl FnOnce(&mut Records) -> Result<(bool, T), E>,
    ) -> Result<T, E> {
        let _held = self.state.hold()?;
        // Unchanged since this process read or wrote it: the copy is the file.
        let stamp = self.state.stamp(BOOK_FILE);
        let mut records: Records = {
            let copy = self.copy();
            (copy.stamp == stamp && stamp != Stamp::default()).then(|| copy.records.clone())
        }
        .map_or_else(|| self.state.read_json(BOOK_FILE), Ok)?;
        let (changed, value) = change(&mut records)?;
        if changed {
            self.state.write_json(BOOK_FILE, &records)?;
        }
        *self.copy() = Copy::of(self.state.stamp(BOOK_FILE), records);
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::scope::Scope;

    fn grant(id: &str) -> Grant {
        Grant {
            id: id.into(),
            client_id: "c1".into(),
            client_name: "Claude".into(),
            scopes: Scopes::of([Scope::Read]),
            granted_at: 1,
            last_used_at: 1,
            last_from: None,
            code: None,
            refresh: None,
            retired: Vec::new(),
        }
    }

    /// Two processes on one directory: what one writes, the other sees within a second.
    #[test]
    fn a_change_by_one_book_is_seen_by_another_on_the_same_directory() {
        let path = std::env::temp_dir().join(format!("zwave-book-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        let one = Book::open(StateDir::open(&path).unwrap()).unwrap();
        let two = Book::open(StateDir::open(&path).unwrap()).unwrap();
        assert_eq!(two.scopes_of("g1"), None);
        one.change(|records| {
            records.grants.push(grant("g1"));
            Ok::<_, StateError>((true, ()))
        })
        .unwrap();
        assert_eq!(one.scopes_of("g1"), Some(Scopes::of([Scope::Read])));
        // `two` looked a moment ago: it looks again once a second has passed.
        two.look_now();
        assert_eq!(two.scopes_of("g1"), Some(Scopes::of([Scope::Read])));
        two.change(|records| Ok::<_, StateError>((records.revoke("g1"), ())))
            .unwrap();
        one.look_now();
        assert_eq!(one.scopes_of("g1"), None);
        let written = std::fs::read_to_string(path.join(BOOK_FILE)).unwrap();
        assert!(written.contains("\"grants\": []"), "{written}");
        std::fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn a_scope_the_server_does_not_know_is_a_corrupt_book() {
        let path = std::env::temp_dir().join(format!("zwave-book-bad-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        let state = StateDir::open(&path).unwrap();
        let mut bad = serde_json::to_value(Records {
            grants: vec![grant("g1")],
            ..Records::default()
        })
        .unwrap();
        bad["grants"][0]["scopes"] = "read everything".into();
        state.write_json(BOOK_FILE, &bad).unwrap();
        let err = Book::open(state).unwrap_err().to_string();
        assert!(
            err.contains("oauth.json cannot be read as one: \"everything\" is not a scope"),
            "{err}"
        );
        std::fs::remove_dir_all(&path).unwrap();
    }
}
