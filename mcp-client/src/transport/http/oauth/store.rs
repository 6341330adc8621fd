//! [`TokenStore`]: what signing in to one server left, kept for the next run: the
//! authorization server's metadata, the client it registered, and the tokens. One JSON file
//! per server URL and way of signing in (client id, scopes, grant, client metadata address:
//! two entries for one URL that sign in differently never share or overwrite each other's
//! tokens; two that sign in alike share them) in the token folder, created 0600 in a 0700
//! folder and replaced atomically (written to a temporary file of its own, then renamed:
//! writers at once leave one whole record, the last); without a folder, kept in memory only.
//! Tokens are never logged, and the store's `Debug` shows none.

use std::{
    os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _},
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
};

use rmcp::transport::auth::{AuthError, AuthorizationMetadata, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

use super::{super::secrets::LiveSecrets, OAuthGrant, OAuthSettings};

/// `$XDG_STATE_HOME/mcp-client/oauth`, else `~/.local/state/mcp-client/oauth`: tokens are
/// state the client keeps between runs, not the person's data (XDG base directories).
pub fn default_token_dir(xdg_state_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let base = match (xdg_state_home.filter(|dir| !dir.is_empty()), home) {
        (Some(state), _) => PathBuf::from(state),
        (None, Some(home)) if !home.is_empty() => Path::new(home).join(".local/state"),
        _ => return None,
    };
    Some(base.join("mcp-client").join("oauth"))
}

/// The client the authorization server knows us as.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(super) struct ClientRecord {
    pub(super) id: String,
    /// A secret the authorization server issued at registration (never one from the
    /// configuration, which stays there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) secret: Option<String>,
    /// The redirect address it was registered with.
    pub(super) redirect_uri: String,
}

/// What the file holds.
#[derive(Clone, Default, Serialize, Deserialize)]
struct Record {
    /// The server's URL: a file is only ever read for the URL it was written for.
    url: String,
    /// The way of signing in it was written for ([`settings_key`]): a file is only ever read
    /// for the settings it was written for (a file from before this was kept is not read).
    #[serde(default)]
    settings: Option<String>,
    #[serde(default)]
    metadata: Option<AuthorizationMetadata>,
    #[serde(default)]
    client: Option<ClientRecord>,
    #[serde(default)]
    credentials: Option<StoredCredentials>,
}

/// One server's tokens: in memory, written through to its file when there is a folder.
#[derive(Clone)]
pub(super) struct TokenStore {
    path: Option<PathBuf>,
    record: Arc<Mutex<Record>>,
    /// The tokens of `record`, for the guards that cut them out of what the server sends.
    /// Invariant: set whenever `record.credentials` is.
    live: LiveSecrets,
}

impl std::fmt::Debug for TokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl TokenStore {
    /// The store of the server at `url` signed in to as `settings` say, in `dir` (read now if
    /// its file exists).
    ///
    /// # Errors
    /// The file exists but cannot be read: a message naming it.
    pub(super) fn open(
        dir: Option<&Path>,
        url: &str,
        settings: &OAuthSettings,
    ) -> Result<Self, String> {
        let path = dir.map(|dir| dir.join(file_name(url, settings)));
        let key = settings_key(settings);
        let mut record = Record {
            url: url.to_owned(),
            settings: Some(key.clone()),
            ..Record::default()
        };
        if let Some(path) = &path
            && readable_by_others(path)
        {
            // Another user could have read (or written) the tokens: they are not used, and
            // signing in again replaces the file with one only its owner can read.
            tracing::warn!(path = %path.display(), "not using a token file that other users of this machine can read or write (it should be 0600); signing in again replaces it");
        } else if let Some(path) = &path {
            match std::fs::read(path) {
                Ok(bytes) => match serde_json::from_slice::<Record>(&bytes) {
                    Ok(read) if read.url == url && read.settings.as_ref() == Some(&key) => {
                        record = read;
                    }
                    // Found by the hostile review: a file from before the settings counted
                    // (or one renamed) could hand an entry another entry's tokens.
                    Ok(_) => {
                        tracing::warn!(path = %path.display(), "not using a token file written for another server or another way of signing in; signing in again replaces it");
                    }
                    // Never quote it: the file holds tokens.
                    Err(_) => {
                        tracing::warn!(path = %path.display(), "ignoring a token file that cannot be read as one; signing in again")
                    }
                },
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => {
                    return Err(format!(
                        "cannot read the token file {}: {err}",
                        path.display()
                    ));
                }
            }
        }
        let live = LiveSecrets::default();
        live.set(
            tokens(record.credentials.as_ref())
                .iter()
                .map(String::as_str),
        );
        Ok(Self {
            path,
            record: Arc::new(Mutex::new(record)),
            live,
        })
    }

    /// The tokens held, as they change: what a server must never see quoted back unredacted.
    pub(super) fn live_secrets(&self) -> LiveSecrets {
        self.live.clone()
    }

    /// The file, when tokens are kept between runs.
    #[cfg(test)]
    pub(super) fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What a previous sign-in left that lets tokens be refreshed without discovery: the
    /// authorization server's metadata and our client there, when there are tokens too.
    pub(super) fn restorable(&self) -> Option<(AuthorizationMetadata, ClientRecord)> {
        let record = self.lock();
        record.credentials.as_ref()?.token_response.as_ref()?;
        Some((record.metadata.clone()?, record.client.clone()?))
    }

    /// The scopes the last token was granted.
    pub(super) fn granted_scopes(&self) -> Vec<String> {
        self.lock()
            .credentials
            .as_ref()
            .map(|credentials| credentials.granted_scopes.clone())
            .unwrap_or_default()
    }

    /// Remembers the authorization server and the client of a sign-in under way; written
    /// with its tokens.
    pub(super) fn remember(&self, metadata: AuthorizationMetadata, client: ClientRecord) {
        let mut record = self.lock();
        record.metadata = Some(metadata);
        record.client = Some(client);
    }

    /// Writes the record, replacing the file atomically; nothing without a folder.
    fn write(&self, record: &Record) -> Result<(), AuthError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let failed = |what: &str, err: std::io::Error| {
            AuthError::CredentialStoreError(format!("cannot {what} {}: {err}", path.display()))
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|err| failed("create the folder of", err))?;
        // A folder made earlier with the umask's permissions is made private too.
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        let bytes = serde_json::to_vec(record)
            .map_err(|err| AuthError::CredentialStoreError(err.to_string()))?;
        // One name per write: two stores of one file (two entries that sign in alike) may
        // write at once.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let temporary = dir.join(format!(
            ".{}.{}-{}.tmp",
            path.file_name()
                .and_then(|name| name.to_str())
                .unwrap_or("tokens"),
            std::process::id(),
            WRITES.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_file(&temporary);
        let written = (|| {
            use std::io::Write as _;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temporary)?;
            file.write_all(&bytes)?;
            file.sync_all()?;
            std::fs::rename(&temporary, path)
        })();
        if let Err(err) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(failed("write", err));
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.lock().credentials.clone())
    }

    async fn save(&self, mut credentials: StoredCredentials) -> Result<(), AuthError> {
        bearer_only(&credentials)?;
        lifetime_zero_as_unknown(&mut credentials);
        let record = {
            let mut record = self.lock();
            self.live
                .set(tokens(Some(&credentials)).iter().map(String::as_str));
            record.credentials = Some(credentials);
            record.clone()
        };
        self.write(&record)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let record = {
            let mut record = self.lock();
            record.credentials = None;
            self.live.set([]);
            record.clone()
        };
        self.write(&record)
    }
}

/// Whether the file at `path` can be read or written by anyone but its owner.
fn readable_by_others(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| meta.permissions().mode() & 0o077 != 0)
}

/// Refuses a token whose `token_type` is not Bearer (RFC 6749 §7.1: a client must not use a
/// token of a type it does not understand): it is neither kept nor sent.
fn bearer_only(credentials: &StoredCredentials) -> Result<(), AuthError> {
    let Some(response) = &credentials.token_response else {
        return Ok(());
    };
    let kind = serde_json::to_value(response)
        .ok()
        .and_then(|value| value["token_type"].as_str().map(str::to_owned))
        .unwrap_or_default();
    if kind.eq_ignore_ascii_case("bearer") {
        return Ok(());
    }
    Err(AuthError::AuthorizationFailed(format!(
        "the authorization server issued a token of type {}, not Bearer (RFC 6749 §7.1): this client sends bearer tokens only, so the token was not kept",
        serde_json::Value::from(common::clip(&kind, 40))
    )))
}

/// Takes `expires_in: 0` as no lifetime given. rmcp refreshes a token that has less than a
/// second left before each request, so a token said to expire at once was refreshed before
/// every request (found by the third hostile review); it is now used until the server
/// refuses it, which signs in (or refreshes) as any refusal does.
fn lifetime_zero_as_unknown(credentials: &mut StoredCredentials) {
    let Some(response) = credentials.token_response.as_mut() else {
        return;
    };
    let zero = serde_json::to_value(&*response)
        .is_ok_and(|value| value.get("expires_in").and_then(serde_json::Value::as_u64) == Some(0));
    if zero {
        tracing::info!(
            "the authorization server gave the token no lifetime (expires_in: 0): it is used until the server refuses it"
        );
        response.set_expires_in(None);
    }
}

/// The access and refresh tokens of `credentials`. (Read through serde: the token types'
/// accessors are oauth2's, a crate this one does not name.)
fn tokens(credentials: Option<&StoredCredentials>) -> Vec<String> {
    let Some(response) = credentials.and_then(|credentials| credentials.token_response.as_ref())
    else {
        return Vec::new();
    };
    let response = serde_json::to_value(response).unwrap_or_default();
    ["access_token", "refresh_token"]
        .into_iter()
        .filter_map(|key| response.get(key)?.as_str().map(str::to_owned))
        .collect()
}

/// The file of the server at `url` signed in to as `settings` say: its host and port to be
/// recognisable, and a hash of the whole URL and of the settings that change what a token
/// is, to be one per both (`home.example_443-3f1c….json`). The file says the settings it was
/// written for too, and is read only for them: a name is no proof.
fn file_name(url: &str, settings: &OAuthSettings) -> String {
    let key = format!("{url}{}", settings_key(settings));
    let authority = reqwest::Url::parse(url).map_or_else(
        |_| "server".to_owned(),
        |parsed| {
            format!(
                "{}_{}",
                parsed.host_str().unwrap_or("server"),
                parsed.port_or_known_default().unwrap_or(0)
            )
        },
    );
    let readable: String = authority
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(80)
        .collect();
    // FNV-1a, 64 bits: stable across runs and builds (std's hasher is not).
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{readable}-{hash:016x}.json")
}

/// The settings that change what a token is, spelled out (empty without any): the client
/// id, the scopes (sorted, once each), the grant, the client metadata address.
fn settings_key(settings: &OAuthSettings) -> String {
    let mut key = String::new();
    let mut scopes = settings.scopes.clone();
    scopes.sort();
    scopes.dedup();
    let grant = match settings.grant {
        OAuthGrant::AuthorizationCode => None,
        OAuthGrant::ClientCredentials => Some("client_credentials"),
    };
    for (name, value) in [
        ("client_id", settings.client_id.clone()),
        ("scopes", (!scopes.is_empty()).then(|| scopes.join(" "))),
        ("grant", grant.map(str::to_owned)),
        ("client_metadata_url", settings.client_metadata_url.clone()),
    ] {
        if let Some(value) = value {
            // Lengths first: no two settings spell the same key.
            key.push_str(&format!("\n{name}:{}:{value}", value.len()));
        }
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::secrets::Secrets;

    #[test]
    fn the_token_folder_is_the_users_state_folder() {
        assert_eq!(
            default_token_dir(Some("/x/state"), Some("/home/u")),
            Some(PathBuf::from("/x/state/mcp-client/oauth"))
        );
        assert_eq!(
            default_token_dir(Some(""), Some("/home/u")),
            Some(PathBuf::from("/home/u/.local/state/mcp-client/oauth"))
        );
        assert_eq!(default_token_dir(None, None), None);
    }

    #[test]
    fn each_url_has_its_own_recognisable_file() {
        let plain = OAuthSettings::default();
        let a = file_name("https://home.example/mcp", &plain);
        assert!(a.starts_with("home.example_443-"), "{a}");
        assert!(a.ends_with(".json"));
        assert_ne!(a, file_name("https://home.example/other", &plain));
        assert_eq!(a, file_name("https://home.example/mcp", &plain));
        assert!(!file_name("http://[::1]:8080/mcp", &plain).contains('/'));
        // The name files had before settings counted (FNV-1a of the URL alone).
        assert_eq!(a, "home.example_443-39ae67fd3718cc2e.json");
    }

    /// Found by the third hostile review: two entries for one URL signed in into one file.
    #[test]
    fn entries_that_sign_in_differently_have_files_of_their_own() {
        let url = "https://home.example/mcp";
        let plain = file_name(url, &OAuthSettings::default());
        let with = |settings: OAuthSettings| file_name(url, &settings);
        let scoped = with(OAuthSettings {
            scopes: vec!["zwave:read".into()],
            ..OAuthSettings::default()
        });
        let names = [
            plain.clone(),
            scoped.clone(),
            with(OAuthSettings {
                scopes: vec!["zwave:read".into(), "zwave:write".into()],
                ..OAuthSettings::default()
            }),
            with(OAuthSettings {
                client_id: Some("agent".into()),
                ..OAuthSettings::default()
            }),
            with(OAuthSettings {
                client_id: Some("agent".into()),
                grant: OAuthGrant::ClientCredentials,
                ..OAuthSettings::default()
            }),
            with(OAuthSettings {
                client_metadata_url: Some("https://agent.example/client.json".into()),
                ..OAuthSettings::default()
            }),
        ];
        let distinct: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(distinct.len(), names.len(), "{names:?}");
        // What does not change the token (the redirect port, the secret) keeps the file, and
        // so does the scopes' order.
        assert_eq!(
            plain,
            with(OAuthSettings {
                redirect_port: Some(8765),
                client_secret: Some("s".into()),
                ..OAuthSettings::default()
            })
        );
        assert_eq!(
            with(OAuthSettings {
                scopes: vec!["b".into(), "a".into()],
                ..OAuthSettings::default()
            }),
            with(OAuthSettings {
                scopes: vec!["a".into(), "b".into(), "a".into()],
                ..OAuthSettings::default()
            })
        );
        assert_ne!(scoped, plain);
    }

    /// Two stores of one file (two entries that sign in alike) writing at once: every write
    /// succeeds and the file holds one whole record.
    #[test]
    fn stores_of_one_file_can_write_at_once() {
        let dir = std::env::temp_dir().join(format!("mcp-client-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let url = "http://127.0.0.1:9/mcp";
        let settings = OAuthSettings::default();
        let stores = [
            TokenStore::open(Some(&dir), url, &settings).unwrap(),
            TokenStore::open(Some(&dir), url, &settings).unwrap(),
        ];
        std::thread::scope(|scope| {
            for n in 0..8 {
                let store = &stores[n % 2];
                scope.spawn(move || {
                    for _ in 0..50 {
                        store.write(&store.lock().clone()).unwrap();
                    }
                });
            }
        });
        let bytes = std::fs::read(dir.join(file_name(url, &settings))).unwrap();
        let record: Record = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(record.url, url);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn tokens_are_written_0600_in_a_0700_folder_and_read_back_for_their_url_only() {
        let dir = std::env::temp_dir().join(format!("mcp-client-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let tokens = dir.join("oauth");
        let url = "http://127.0.0.1:9/mcp";
        let store = TokenStore::open(Some(&tokens), url, &OAuthSettings::default()).unwrap();
        let credentials: StoredCredentials = serde_json::from_value(serde_json::json!({
            "client_id": "c1",
            "token_response": {"access_token": "at-s3cret", "token_type": "bearer"},
            "granted_scopes": ["read"]
        }))
        .unwrap();
        store.save(credentials).await.unwrap();
        let path = store.path().unwrap().to_owned();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&tokens), 0o700);
        assert!(!format!("{store:?}").contains("s3cret"));
        let again = TokenStore::open(Some(&tokens), url, &OAuthSettings::default()).unwrap();
        assert_eq!(again.granted_scopes(), ["read"]);
        // The tokens held, saved now or read from the file, are what the guards cut out.
        for held in [&store, &again] {
            let secrets = Secrets::default().with_live(Some(held.live_secrets()));
            assert_eq!(secrets.scrub("echo at-s3cret"), "echo [redacted]");
        }
        store.clear().await.unwrap();
        let secrets = Secrets::default().with_live(Some(store.live_secrets()));
        assert_eq!(secrets.scrub("at-s3cret"), "at-s3cret");
        store
            .save(again.load().await.unwrap().unwrap())
            .await
            .unwrap();
        // Only the temporary file's rename ever wrote the file: nothing else is left.
        assert_eq!(std::fs::read_dir(&tokens).unwrap().count(), 1);
        // A file written for another URL is not read for this one.
        std::fs::copy(
            &path,
            tokens.join(file_name(
                "http://127.0.0.1:9/other",
                &OAuthSettings::default(),
            )),
        )
        .unwrap();
        let other = TokenStore::open(
            Some(&tokens),
            "http://127.0.0.1:9/other",
            &OAuthSettings::default(),
        )
        .unwrap();
        assert!(other.load().await.unwrap().is_none());
        // Found by the hostile review of the settings' files: a file written for other
        // settings (an admin client's), renamed to the name of a plain entry's, handed that
        // entry its tokens. It is read only for the settings it says.
        let admin = OAuthSettings {
            client_id: Some("machine".into()),
            scopes: vec!["admin".into()],
            grant: OAuthGrant::ClientCredentials,
            ..OAuthSettings::default()
        };
        let admins = TokenStore::open(Some(&tokens), url, &admin).unwrap();
        admins
            .save(again.load().await.unwrap().unwrap())
            .await
            .unwrap();
        std::fs::copy(tokens.join(file_name(url, &admin)), &path).unwrap();
        let plain = TokenStore::open(Some(&tokens), url, &OAuthSettings::default()).unwrap();
        assert!(plain.load().await.unwrap().is_none());
        std::fs::remove_file(tokens.join(file_name(url, &admin))).unwrap();
        store
            .save(again.load().await.unwrap().unwrap())
            .await
            .unwrap();
        // Found by the third hostile review: a token file others can read was used silently.
        // It is not used; the next save writes it 0600 again.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let loose = TokenStore::open(Some(&tokens), url, &OAuthSettings::default()).unwrap();
        assert!(loose.load().await.unwrap().is_none());
        loose
            .save(again.load().await.unwrap().unwrap())
            .await
            .unwrap();
        assert_eq!(mode(&path), 0o600);
        assert!(
            TokenStore::open(Some(&tokens), url, &OAuthSettings::default())
                .unwrap()
                .load()
                .await
                .unwrap()
                .is_some()
        );
        // A token that is not Bearer is neither kept nor sent.
        let mac: StoredCredentials = serde_json::from_value(serde_json::json!({
            "client_id": "c1",
            "token_response": {"access_token": "at-mac", "token_type": "mac"},
        }))
        .unwrap();
        let refused = loose.save(mac).await.unwrap_err().to_string();
        assert!(
            refused.contains("a token of type \"mac\", not Bearer"),
            "{refused}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
