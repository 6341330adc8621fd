//! Whether the state directory and its files can be trusted: this user's own, no links, and
//! no folder above the directory that another user could write or owns.

use std::{
    fs::{File, OpenOptions},
    os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _},
    path::Path,
};

use super::StateError;

/// Refuses `folder`, above the state directory, where another user could swap what is in
/// it: writable by others and not sticky, or owned by a user other than this one and root
/// (as OpenSSH's `StrictModes` looks at a home directory's).
pub(super) fn held_above(folder: &Path) -> Result<(), StateError> {
    let meta = std::fs::metadata(folder).map_err(|source| StateError::Io {
        what: "read",
        path: folder.to_owned(),
        source,
    })?;
    let me = rustix::process::geteuid().as_raw();
    let mode = meta.permissions().mode();
    let what = if meta.uid() != me && meta.uid() != 0 {
        format!(
            "is owned by user {}, not by this server's ({me}) or root",
            meta.uid()
        )
    } else if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        format!(
            "can be written by other users (mode {:o}) and is not sticky",
            mode & 0o7777
        )
    } else {
        return Ok(());
    };
    Err(StateError::LooseParent {
        path: folder.to_owned(),
        what,
    })
}

/// Refuses `meta` of `path` unless this process's user owns it.
pub(super) fn own(path: &Path, meta: &std::fs::Metadata) -> Result<(), StateError> {
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() == me {
        return Ok(());
    }
    Err(StateError::NotOwn {
        path: path.to_owned(),
        what: format!("owned by user {}, not by this server's ({me})", meta.uid()),
    })
}

/// Opens `path` as `options` say without following a symbolic link, and only when it is a
/// regular file of this process's user: a file planted by someone else (a link to another
/// file, or theirs) is never read, locked or appended to.
///
/// # Errors
/// It cannot be opened (a link among them), or is not a regular file of this user.
pub fn open_own(path: &Path, options: &mut OpenOptions) -> Result<File, StateError> {
    let nofollow = i32::try_from(rustix::fs::OFlags::NOFOLLOW.bits()).unwrap_or(0);
    let file = options
        .custom_flags(nofollow)
        .open(path)
        .map_err(|source| match source.raw_os_error() {
            Some(code) if code == rustix::io::Errno::LOOP.raw_os_error() => StateError::NotOwn {
                path: path.to_owned(),
                what: "a symbolic link".to_owned(),
            },
            _ => StateError::Io {
                what: "open",
                path: path.to_owned(),
                source,
            },
        })?;
    let meta = file.metadata().map_err(|source| StateError::Io {
        what: "read",
        path: path.to_owned(),
        source,
    })?;
    if !meta.is_file() {
        return Err(StateError::NotOwn {
            path: path.to_owned(),
            what: "not a regular file".to_owned(),
        });
    }
    own(path, &meta)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::{super::StateDir, *};

    fn scratch(name: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("zwave-trust-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        path
    }

    /// Found by the hostile review: the folders above the state directory were not looked
    /// at; one anybody may write lets another user swap the state directory. It is refused
    /// before anything is made in it, through a link too, and a link above the directory is
    /// not followed again later.
    #[test]
    fn a_folder_above_that_others_may_write_is_refused_unless_sticky() {
        let above = scratch("parents");
        std::fs::create_dir_all(&above).unwrap();
        std::fs::set_permissions(&above, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = StateDir::open(&above.join("state"))
            .unwrap_err()
            .to_string();
        assert!(!above.join("state").exists(), "made before refused");
        let real = scratch("parents-real");
        std::fs::create_dir_all(&real).unwrap();
        std::os::unix::fs::symlink(&real, above.join("link")).unwrap();
        let through = StateDir::open(&above.join("link/state")).unwrap_err();
        assert!(
            through
                .to_string()
                .contains("can be written by other users (mode 777)"),
            "{through}"
        );
        // Kept by its resolved path: re-pointing a link above it later moves nothing.
        let safe = scratch("parents-safe");
        std::fs::create_dir_all(&safe).unwrap();
        std::os::unix::fs::symlink(&real, safe.join("link")).unwrap();
        let state = StateDir::open(&safe.join("link/state")).unwrap();
        assert_eq!(state.path(), real.canonicalize().unwrap().join("state"));
        // `..` after a folder not made yet, and a dangling link into the loose folder.
        let dotted = StateDir::open(&safe.join("new/../link/state")).unwrap_err();
        assert!(
            dotted.to_string().ends_with("new/../link/state is a path with `..` in it (give the folder's own path): the state directory and its files must be this user's own, and no links (remove it, or give another --state-dir)"),
            "{dotted}"
        );
        assert!(!safe.join("new").exists());
        std::os::unix::fs::symlink(above.join("not-yet"), safe.join("dangling")).unwrap();
        let dangling = StateDir::open(&safe.join("dangling/state"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            dangling,
            format!(
                "cannot read {}: No such file or directory (os error 2)",
                safe.join("dangling").display()
            )
        );
        assert!(!above.join("not-yet").exists());
        std::fs::remove_dir_all(&real).unwrap();
        std::fs::remove_dir_all(&safe).unwrap();
        assert_eq!(
            err,
            format!(
                "{} (a folder above the state directory) can be written by other users (mode 777) and is not sticky: another user could swap the state directory for one of theirs (chmod go-w it, or give another --state-dir)",
                above.display()
            )
        );
        // Sticky, as /tmp is: others cannot move what is not theirs.
        std::fs::set_permissions(&above, std::fs::Permissions::from_mode(0o1777)).unwrap();
        StateDir::open(&above.join("state")).unwrap();
        std::fs::remove_dir_all(&above).unwrap();
    }

    /// Found by the hostile review: a state directory planted by someone else, or a link in
    /// it, was used (root then locked, read and appended where the planter chose).
    #[test]
    fn a_link_or_a_file_not_of_this_user_is_refused() {
        let path = scratch("links");
        let state = StateDir::open(&path).unwrap();
        let elsewhere = path.with_extension("elsewhere");
        std::fs::write(&elsewhere, "{}").unwrap();
        std::os::unix::fs::symlink(&elsewhere, path.join(".lock")).unwrap();
        let err = state.hold().unwrap_err().to_string();
        assert!(err.ends_with(".lock is a symbolic link: the state directory and its files must be this user's own, and no links (remove it, or give another --state-dir)"), "{err}");
        std::os::unix::fs::symlink(&elsewhere, path.join("oauth.json")).unwrap();
        let err = state.read("oauth.json").unwrap_err().to_string();
        assert!(err.contains("oauth.json is a symbolic link"), "{err}");
        let linked = path.with_extension("link");
        std::os::unix::fs::symlink(&path, &linked).unwrap();
        let err = StateDir::open(&linked).unwrap_err().to_string();
        assert!(
            err.contains("is not a directory (a symbolic link, or a file)"),
            "{err}"
        );
        for leftover in [&elsewhere, &linked] {
            std::fs::remove_file(leftover).unwrap();
        }
        std::fs::remove_dir_all(&path).unwrap();
    }
}
