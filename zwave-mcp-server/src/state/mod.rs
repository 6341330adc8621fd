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

mod trust;

pub use trust::open_own;
use trust::{held_above, own};

/// How long a change waits for another process holding the state directory.
pub const HOLD_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

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
    /// The folder or a file in it is not this process's user's own, or is not what it
    /// should be (a symbolic link, not a regular file): someone else could have put it there.
    #[error("{} is {what}: the state directory and its files must be this user's own, and no links (remove it, or give another --state-dir)", path.display())]
    NotOwn {
        /// Where.
        path: PathBuf,
        /// What it is instead: "owned by user 65534", "a symbolic link".
        what: String,
    },
    /// The directory stayed held by another process (or a stuck one) for too long.
    #[error("the state directory {} stayed locked by another process for {secs} s (a stuck server on the same --state-dir?): nothing was changed", path.display())]
    Busy {
        /// Its lock file.
        path: PathBuf,
        /// How long was waited.
        secs: u64,
    },
    /// A folder above the state directory can be written by another user (and is not
    /// sticky, as `/tmp` is), or is another user's: they could move the state directory away
    /// and put another in its place.
    #[error("{} (a folder above the state directory) {what}: another user could swap the state directory for one of theirs (chmod go-w it, or give another --state-dir)", path.display())]
    LooseParent {
        /// The folder.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
    /// A file would grow past what a state file may hold, so it would not be read again.
    #[error("{} would hold {len} bytes, more than the {MAX_STATE_FILE_BYTES} a state file may: nothing was written", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// How large it would be.
        len: usize,
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
    /// The folder at `path`, created 0700 when missing, and kept by its resolved path: a
    /// link above it that is moved later does not move it (found by the hostile review: a
    /// link in a folder anyone may write was resolved at the check, then re-pointed).
    ///
    /// # Errors
    /// It cannot be created, others can read or write it, or a folder above it is
    /// [`LooseParent`](StateError::LooseParent) (looked at before anything is created).
    pub fn open(path: &Path) -> Result<Self, StateError> {
        let io = |what: &'static str, at: &Path| {
            let at = at.to_owned();
            move |source| StateError::Io {
                what,
                path: at,
                source,
            }
        };
        // Found by the hostile review: `new/../link` was made through a link the check had
        // not seen (`..` after a folder that did not exist yet).
        if path
            .components()
            .any(|part| part == std::path::Component::ParentDir)
        {
            return Err(StateError::NotOwn {
                path: path.to_owned(),
                what: "a path with `..` in it (give the folder's own path)".to_owned(),
            });
        }
        let absolute = std::path::absolute(path).map_err(io("read", path))?;
        // The nearest thing there, a dangling link too (its folder is looked at, and it
        // cannot be resolved: refused).
        let existing = absolute
            .ancestors()
            .find(|folder| folder.symlink_metadata().is_ok())
            .unwrap_or(Path::new("/"));
        let resolved = existing.canonicalize().map_err(io("read", existing))?;
        // Every folder above it, as given (a link's folder) and as resolved; where it is made
        // too, unless that is the folder itself.
        let itself = existing == absolute;
        for folder in absolute.ancestors().chain(resolved.ancestors()) {
            if folder.exists() && !(itself && (folder == absolute || folder == resolved)) {
                held_above(folder)?;
            }
        }
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
            .map_err(io("create the state folder", path))?;
        let meta = std::fs::symlink_metadata(path).map_err(io("read", path))?;
        if !meta.is_dir() {
            return Err(StateError::NotOwn {
                path: path.to_owned(),
                what: "not a directory (a symbolic link, or a file)".to_owned(),
            });
        }
        own(path, &meta)?;
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(StateError::Loose {
                path: path.to_owned(),
                mode: mode & 0o777,
            });
        }
        // And once made, every folder above where it really is (a link made or moved in the
        // meantime is seen here).
        let real = path.canonicalize().map_err(io("read", path))?;
        for folder in real.ancestors().skip(1) {
            held_above(folder)?;
        }
        Ok(Self { path: real })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Holds the directory against other writers until dropped, waiting for another holder
    /// at most [`HOLD_WAIT`] (callers run on the blocking pool: nothing else waits).
    ///
    /// # Errors
    /// The lock file cannot be opened, is not this user's own, or stayed held.
    pub fn hold(&self) -> Result<Held, StateError> {
        let path = self.path.join(".lock");
        let failed = |source| StateError::Io {
            what: "lock",
            path: path.clone(),
            source,
        };
        let file = open_own(
            &path,
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600),
        )?;
        let started = std::time::Instant::now();
        loop {
            match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(Held { _file: file }),
                Err(rustix::io::Errno::WOULDBLOCK) if started.elapsed() < HOLD_WAIT => {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(rustix::io::Errno::WOULDBLOCK) => {
                    return Err(StateError::Busy {
                        path,
                        secs: HOLD_WAIT.as_secs(),
                    });
                }
                Err(errno) => return Err(failed(errno.into())),
            }
        }
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
        let file = match open_own(&path, OpenOptions::new().read(true)) {
            Ok(file) => file,
            Err(StateError::Io { source, .. }) if source.kind() == ErrorKind::NotFound => {
                return Ok(None);
            }
            Err(err) => return Err(err),
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
        // Found by the hostile review: a file written past the bound could not be read back
        // at the next start.
        if u64::try_from(bytes.len()).map_or(true, |len| len > MAX_STATE_FILE_BYTES) {
            return Err(StateError::TooLarge {
                path,
                len: bytes.len(),
            });
        }
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

    /// Found by the hostile review: a file could be written past the bound it is read with,
    /// and then not read at the next start. It is refused whole; the file stays as it was.
    #[test]
    fn a_file_past_the_bound_is_not_written() {
        let path = scratch("large");
        let state = StateDir::open(&path).unwrap();
        state.write("book.json", b"{}").unwrap();
        let large = vec![b' '; usize::try_from(MAX_STATE_FILE_BYTES).unwrap() + 1];
        let err = state.write("book.json", &large).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{} would hold 16777217 bytes, more than the 16777216 a state file may: nothing was written",
                path.join("book.json").display()
            )
        );
        assert_eq!(state.read("book.json").unwrap().unwrap(), b"{}");
        std::fs::remove_dir_all(&path).unwrap();
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

    /// A holder that never lets go (a stuck server on the same directory): the change is
    /// refused after HOLD_WAIT, saying so, instead of hanging.
    #[test]
    fn a_directory_held_too_long_is_refused_saying_so() {
        let path = scratch("busy");
        let state = StateDir::open(&path).unwrap();
        let stuck = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path.join(".lock"))
            .unwrap();
        rustix::fs::flock(&stuck, rustix::fs::FlockOperation::LockExclusive).unwrap();
        let err = state.hold().unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "the state directory {}/.lock stayed locked by another process for 5 s (a stuck server on the same --state-dir?): nothing was changed",
                path.display()
            )
        );
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
