//! The state directory: what the server keeps between runs (the audit trail; with OAuth the
//! signing key, clients and grants), written atomically (a temporary file of its own, synced, then renamed), only its
//! owner may read it (files 0600 in a 0700 folder), and one writer at a time across processes
//! (an exclusive `flock` on `.lock` around each read-change-write). A file that cannot be read
//! is an error naming it: never an empty state, which would read as "nothing granted" for one
//! file and could read as anything for another.

use std::{
    fs::{DirBuilder, File, OpenOptions},
    io::{ErrorKind, Read as _, Write as _},
    os::unix::fs::{
        DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _,
    },
    path::{Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
};

use serde::{Serialize, de::DeserializeOwned};

/// The largest state file read: a corrupt or hostile file is an error, not a 4 GiB read.
pub const MAX_STATE_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// What went wrong with the state directory, naming the path.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The folder or a file could not be created, read or written.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// What was being done: "create the state folder", "read", "write".
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file is there but does not hold what it should.
    #[error("the state file {} cannot be read as one: {why} (fix or move it away; nothing was granted from it)", path.display())]
    Corrupt {
        /// Where.
        path: PathBuf,
        /// Why, as the parser said.
        why: String,
    },
    /// Another user can read or write the folder or a file in it.
    #[error("{} can be read or written by other users of this machine (mode {mode:o}): it holds secrets, so it must be the owner's alone (chmod 700 for the folder, 600 for its files)", path.display())]
    Loose {
        /// Where.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
}

/// The state directory.
#[derive(Debug, Clone)]
pub struct StateDir {
    path: PathBuf,
}

/// What identifies one version of a file: it changed when this did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stamp {
    inode: u64,
    modified_ns: i128,
    len: u64,
}

/// An exclusive hold on the state directory, released when dropped (and by the kernel when
/// the process ends).
#[derive(Debug)]
pub struct Held {
    _file: File,
}

impl StateDir {
    /// The folder at `path`, created 0700 when missing.
    ///
    /// # Errors
    /// It cannot be created, or others can read or write it.
    pub fn open(path: &Path) -> Result<Self, StateError> {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
            .map_err(|source| StateError::Io {
                what: "create the state folder",
                path: path.to_owned(),
                source,
            })?;
        let mode = std::fs::metadata(path)
            .map_err(|source| StateError::Io {
                what: "read",
                path: path.to_owned(),
                source,
            })?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(StateError::Loose {
                path: path.to_owned(),
                mode: mode & 0o777,
            });
        }
        Ok(Self {
            path: path.to_owned(),
        })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Holds the directory against other writers until dropped.
    ///
    /// # Errors
    /// The lock file cannot be opened or locked.
    pub fn hold(&self) -> Result<Held, StateError> {
        let path = self.path.join(".lock");
        let failed = |source| StateError::Io {
            what: "lock",
            path: path.clone(),
            source,
        };
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(failed)?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|errno| failed(errno.into()))?;
        Ok(Held { _file: file })
    }

    /// The version of the file `name` now (the default stamp when it does not exist).
    pub fn stamp(&self, name: &str) -> Stamp {
        std::fs::metadata(self.path.join(name)).map_or_else(
            |_| Stamp::default(),
            |meta| Stamp {
                inode: meta.ino(),
                modified_ns: i128::from(meta.mtime()) * 1_000_000_000
                    + i128::from(meta.mtime_nsec()),
                len: meta.len(),
            },
        )
    }

    /// The bytes of the file `name`, `None` when it does not exist.
    ///
    /// # Errors
    /// It cannot be read, is larger than [`MAX_STATE_FILE_BYTES`], or others can read it.
    pub fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StateError> {
        let path = self.path.join(name);
        let failed = |source| StateError::Io {
            what: "read",
            path: path.clone(),
            source,
        };
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(failed(err)),
        };
        let meta = file.metadata().map_err(failed)?;
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(StateError::Loose {
                path,
                mode: mode & 0o777,
            });
        }
        if meta.len() > MAX_STATE_FILE_BYTES {
            return Err(StateError::Corrupt {
                path,
                why: format!(
                    "it holds {} bytes, more than the {MAX_STATE_FILE_BYTES} a state file may",
                    meta.len()
                ),
            });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.take(MAX_STATE_FILE_BYTES)
            .read_to_end(&mut bytes)
            .map_err(failed)?;
        Ok(Some(bytes))
    }

    /// The JSON file `name` read as `T`; `T::default()` when it does not exist.
    ///
    /// # Errors
    /// As [`read`](Self::read), or it is not JSON of that shape.
    pub fn read_json<T: DeserializeOwned + Default>(&self, name: &str) -> Result<T, StateError> {
        match self.read(name)? {
            None => Ok(T::default()),
            Some(bytes) => serde_json::from_slice(&bytes).map_err(|err| StateError::Corrupt {
                path: self.path.join(name),
                why: err.to_string(),
            }),
        }
    }

    /// Replaces the file `name` with `bytes` atomically, 0600.
    ///
    /// # Errors
    /// It cannot be written.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<(), StateError> {
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let path = self.path.join(name);
        let temporary = self.path.join(format!(
            ".{name}.{}-{}.tmp",
            std::process::id(),
            WRITES.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temporary)?;
            file.write_all(bytes)?;
            file.sync_all()?;
            std::fs::rename(&temporary, &path)?;
            // The rename itself, kept across a power cut.
            File::open(&self.path)?.sync_all()
        })();
        written.map_err(|source| {
            let _ = std::fs::remove_file(&temporary);
            StateError::Io {
                what: "write",
                path,
                source,
            }
        })
    }

    /// [`write`](Self::write) of `value` as JSON.
    ///
    /// # Errors
    /// It cannot be written.
    pub fn write_json<T: Serialize>(&self, name: &str, value: &T) -> Result<(), StateError> {
        let bytes = serde_json::to_vec_pretty(value).map_err(|err| StateError::Corrupt {
            path: self.path.join(name),
            why: err.to_string(),
        })?;
        self.write(name, &bytes)
    }

    /// Lets others read the file `name` (tests of the refusal).
    #[cfg(test)]
    pub fn loosen_for_test(&self, name: &str) {
        let _ =
            std::fs::set_permissions(self.path.join(name), std::fs::Permissions::from_mode(0o644));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("zwave-state-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        path
    }

    #[test]
    fn files_are_the_owners_alone_and_replaced_whole() {
        let path = scratch("write");
        let state = StateDir::open(&path.join("deep")).unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(state.path()), 0o700);
        assert_eq!(state.read("grants.json").unwrap(), None);
        let before = state.stamp("grants.json");
        state
            .write_json("grants.json", &serde_json::json!({"a": 1}))
            .unwrap();
        assert_eq!(mode(&state.path().join("grants.json")), 0o600);
        assert_ne!(state.stamp("grants.json"), before);
        let read: serde_json::Value = state.read_json("grants.json").unwrap();
        assert_eq!(read["a"], 1);
        // Only the file itself is left: every temporary was renamed.
        let names: Vec<_> = std::fs::read_dir(state.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        std::fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn a_file_that_cannot_be_read_is_an_error_naming_it() {
        let path = scratch("corrupt");
        let state = StateDir::open(&path).unwrap();
        state.write("grants.json", b"{not json").unwrap();
        let err = state
            .read_json::<serde_json::Value>("grants.json")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!(
                "the state file {}/grants.json cannot be read as one: key must be a string at line 1 column 2",
                path.display()
            )),
            "{err}"
        );
        assert!(
            err.ends_with("(fix or move it away; nothing was granted from it)"),
            "{err}"
        );
        state.loosen_for_test("grants.json");
        let err = state.read("grants.json").unwrap_err().to_string();
        assert!(
            err.contains(
                "grants.json can be read or written by other users of this machine (mode 644)"
            ),
            "{err}"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = StateDir::open(&path).unwrap_err().to_string();
        assert!(err.contains("(mode 755)"), "{err}");
        std::fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn one_holder_at_a_time() {
        let path = scratch("hold");
        let state = StateDir::open(&path).unwrap();
        let held = state.hold().unwrap();
        let other = File::open(state.path().join(".lock")).unwrap();
        assert!(
            rustix::fs::flock(&other, rustix::fs::FlockOperation::NonBlockingLockExclusive)
                .is_err()
        );
        drop(held);
        rustix::fs::flock(&other, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
        std::fs::remove_dir_all(&path).unwrap();
    }
}
