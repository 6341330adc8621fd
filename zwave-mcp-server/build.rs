//! Lays out the server binary's code with the functions that run first, together.
//!
//! The kernel maps a program's code in 64 KiB windows around each page it touches, so the
//! few thousand functions that run at start-up and per request, when scattered over 8 MB of
//! code, made four fifths of it resident. `symbol-order.txt` lists those functions (written
//! by `scripts/symbol-order.sh` from callgrind runs of `--demo` and of the MQTT backend);
//! the linker (rust-lld, the default for this target) puts them first. A name it does not
//! know (after a dependency or toolchain update) is skipped: the layout gets worse, never
//! the program.

#![allow(
    clippy::print_stdout,
    reason = "cargo reads a build script's instructions from stdout"
)]

fn main() {
    println!("cargo::rerun-if-changed=symbol-order.txt");
    let var = |name| std::env::var(name).unwrap_or_default();
    let dir = var("CARGO_MANIFEST_DIR");
    // Release builds (the profiles that inherit from it too) for the target whose default
    // linker is rust-lld, which reads the list; debug builds' names never match it.
    if var("TARGET") == "x86_64-unknown-linux-gnu" && var("PROFILE") == "release" && !dir.is_empty()
    {
        println!(
            "cargo::rustc-link-arg-bin=zwave-mcp-server=-Wl,--symbol-ordering-file={dir}/symbol-order.txt,--no-warn-symbol-ordering"
        );
    }
}
