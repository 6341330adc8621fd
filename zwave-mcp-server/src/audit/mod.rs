//! The audit trail: every write and upkeep operation (whoever asked, whatever came of it),
//! every sign-in, grant, denial and revocation, appended as one JSON line to `audit.jsonl` in
//! the state directory: when, who (the stdio host, the owner's key, or a granted client by
//! its own name and its grant), what, and the outcome (confirmed, acknowledged,
//! contradicted, refused and why). The file is the owner's alone (0600); past
//! [`ROTATE_AT_BYTES`] it is renamed `audit.jsonl.1` (the older ones moving up to
//! [`KEPT_ROTATIONS`]), holding the state directory so that processes sharing it rotate once.
//! Each line is one `write` on a file opened to append, so lines of several processes never
//! interleave. A line that cannot be written is an error in the server's log; the action it
//! tells of is not held back.
//!
//! An MCP client cannot read the trail: it tells what every client did, and a client has no
//! business knowing what the others do. The owner reads it on the grants page.

use std::{
    fs::{File, OpenOptions},
    io::{Read as _, Seek as _, SeekFrom, Write as _},
    os::unix::fs::{MetadataExt as _, OpenOptionsExt as _},
    path::{Path, PathBuf},
    sync::{Mutex, PoisonError},
};

use serde_json::{Value, json};

/// The file in the state directory.
pub const AUDIT_FILE: &str = "audit.jsonl";
/// The size past which the file is rotated.
pub const ROTATE_AT_BYTES: u64 = 8 * 1024 * 1024;
/// Rotated files kept (`audit.jsonl.1` … `.3`).
pub const KEPT_ROTATIONS: u32 = 3;
/// The longest text kept in one field, in characters.
const MAX_FIELD_CHARS: usize = 1024;

/// The trail, appended to.
#[derive(Debug)]
pub struct AuditTrail {
    dir: PathBuf,
    file: Mutex<Option<File>>,
}

impl AuditTrail {
    /// The trail in the state directory `dir` (which exists, 0700).
    pub fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_owned(),
            file: Mutex::new(None),
        }
    }

    fn path(&self) -> PathBuf {
        self.dir.join(AUDIT_FILE)
    }

    /// The file, opened to append: never through a link, only when it is this user's own.
    fn open(&self) -> std::io::Result<File> {
        crate::state::open_own(
            &self.path(),
            OpenOptions::new().create(true).append(true).mode(0o600),
        )
        .map_err(std::io::Error::other)
    }

    /// Appends what `who` did (`what`) and what came of it.
    pub fn record(&self, who: &str, what: &str, outcome: &str) {
        let clip = |text: &str| crate::network::text::clean(text, MAX_FIELD_CHARS).into_owned();
        let at = jiff::Timestamp::now().to_string();
        let mut line =
            json!({"at": at, "who": clip(who), "what": clip(what), "outcome": clip(outcome)})
                .to_string();
        line.push('\n');
        if let Err(err) = self.append(line.as_bytes()) {
            tracing::error!(error = %err, path = %self.path().display(), "an audit line could not be written");
        }
    }

    fn append(&self, line: &[u8]) -> std::io::Result<()> {
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        let rotated =
            std::fs::metadata(self.path()).is_ok_and(|meta| meta.len() >= ROTATE_AT_BYTES);
        if rotated {
            self.rotate()?;
            *file = None;
        }
        if file.is_none() {
            *file = Some(self.open()?);
        }
        let Some(open) = file.as_mut() else {
            return Ok(());
        };
        // Another process may have rotated it: append to the file now at the path.
        let at_path = std::fs::metadata(self.path()).map(|meta| meta.ino()).ok();
        if at_path != Some(open.metadata()?.ino()) {
            *open = self.open()?;
        }
        open.write_all(line)?;
        open.sync_data()
    }

    /// Moves `audit.jsonl` to `.1` (and each older one up), holding the state directory when
    /// it is free.
    fn rotate(&self) -> std::io::Result<()> {
        let lock = crate::state::open_own(
            &self.dir.join(".lock"),
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600),
        )
        .map_err(std::io::Error::other)?;
        // Never waits: the holder may be this very process, writing the grants a line is
        // about. A trail that could not be rotated now is rotated by a later line.
        if rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err() {
            return Ok(());
        }
        // Rotated meanwhile by another process: nothing to do.
        if std::fs::metadata(self.path()).map_or(true, |meta| meta.len() < ROTATE_AT_BYTES) {
            return Ok(());
        }
        for n in (1..KEPT_ROTATIONS).rev() {
            let from = self.dir.join(format!("{AUDIT_FILE}.{n}"));
            if from.exists() {
                std::fs::rename(&from, self.dir.join(format!("{AUDIT_FILE}.{}", n + 1)))?;
            }
        }
        std::fs::rename(self.path(), self.dir.join(format!("{AUDIT_FILE}.1")))
    }

    /// The last `count` entries (at most; read from the file's last 256 KiB), newest first.
    pub fn recent(&self, count: usize) -> Vec<Value> {
        const TAIL: u64 = 256 * 1024;
        // Read as it is written: never through a link, only this user's own file.
        let Ok(mut file) = crate::state::open_own(&self.path(), OpenOptions::new().read(true))
        else {
            return Vec::new();
        };
        let len = file.metadata().map_or(0, |meta| meta.len());
        let start = len.saturating_sub(TAIL);
        let mut text = String::new();
        if file.seek(SeekFrom::Start(start)).is_err()
            || file.take(TAIL).read_to_string(&mut text).is_err()
        {
            return Vec::new();
        }
        let lines = text.lines().skip(usize::from(start > 0));
        let mut entries: Vec<Value> = lines
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        entries.reverse();
        entries.truncate(count);
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("zwave-audit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        path
    }

    #[test]
    fn entries_are_appended_one_line_each_and_read_back_newest_first() {
        let dir = scratch("append");
        let trail = AuditTrail::new(&dir);
        trail.record(
            "stdio host",
            "control_zwave_device {\"action\":\"on\"}",
            "confirmed",
        );
        trail.record(
            "client \"Kitchen\u{202e}\" (grant g1)",
            "unlock\nFront Door",
            "refused: no",
        );
        let text = std::fs::read_to_string(dir.join(AUDIT_FILE)).unwrap();
        assert_eq!(text.lines().count(), 2);
        let recent = trail.recent(10);
        assert_eq!(recent[0]["who"], "client \"Kitchen\\u{202e}\" (grant g1)");
        assert_eq!(recent[0]["what"], "unlock\\nFront Door");
        assert_eq!(recent[1]["outcome"], "confirmed");
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.join(AUDIT_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The state directory held (by this very process, writing grants): the line is written,
    /// the rotation waits for a later line; nothing waits for the lock.
    #[test]
    fn a_held_state_directory_delays_the_rotation_never_the_line() {
        let dir = scratch("held");
        let trail = AuditTrail::new(&dir);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(".lock"))
            .unwrap();
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).unwrap();
        let blank = vec![b'\n'; usize::try_from(ROTATE_AT_BYTES).unwrap()];
        std::fs::write(dir.join(AUDIT_FILE), blank).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(dir.join(AUDIT_FILE), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        trail.record("owner's key", "held", "written");
        assert!(!dir.join("audit.jsonl.1").exists());
        assert_eq!(trail.recent(1)[0]["what"], "held");
        drop(lock);
        trail.record("owner's key", "free", "rotated");
        assert!(dir.join("audit.jsonl.1").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Found by the hostile review: a trail file planted as a link made root append to the
    /// file it pointed at (a shell's start-up file, with a client's name in the line).
    #[test]
    fn a_trail_planted_as_a_link_is_never_written() {
        let dir = scratch("link");
        let victim = dir.with_extension("victim");
        std::fs::write(&victim, "echo hi\n").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join(AUDIT_FILE)).unwrap();
        AuditTrail::new(&dir).record("someone", "$(touch pwned)", "denied");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "echo hi\n");
        std::fs::remove_file(&victim).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_full_file_is_rotated_and_three_are_kept() {
        let dir = scratch("rotate");
        let trail = AuditTrail::new(&dir);
        let long = "x".repeat(1000);
        for round in 0..5 {
            // Make the file full, then one more line rotates it.
            let file = OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o600)
                .open(dir.join(AUDIT_FILE))
                .unwrap();
            file.set_len(ROTATE_AT_BYTES).unwrap();
            trail.record("owner's key", &long, &format!("round {round}"));
        }
        assert!(dir.join("audit.jsonl.3").exists());
        assert!(!dir.join("audit.jsonl.4").exists());
        let now = trail.recent(5);
        assert_eq!(now.len(), 1);
        assert_eq!(now[0]["outcome"], "round 4");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
