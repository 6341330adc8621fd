//! Debian's packages a test needs, installed once when missing and the tests run as root (how
//! a fresh CI machine gets them); otherwise the caller fails with the command to run.
#![allow(
    clippy::unwrap_used,
    reason = "test support: a failure to set up must stop the test loudly"
)]

use std::{process::Command, sync::Mutex, time::Duration};

use crate::child;

/// Installs `packages` with apt-get when running as root (one installer at a time; the
/// package lists are refreshed once if the first try fails). Does nothing otherwise: the
/// caller looks for what it needs and says what to run.
pub fn install_as_root(packages: &[&str]) {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _one_installer = INSTALL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !is_root() {
        return;
    }
    eprintln!("installing {} from Debian's packages", packages.join(" "));
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|status| status.success())
    };
    if !install() {
        let _ = Command::new("apt-get").args(["update", "-qq"]).status();
        install();
    }
}

/// Whether the tests run as root.
pub fn is_root() -> bool {
    child::output(Command::new("id").arg("-u"), Duration::from_secs(10))
        .stdout
        .trim_ascii()
        == b"0"
}
