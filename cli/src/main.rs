//! `wikidex`: build, search, inspect and evaluate wiki indexes from the command line.
//!
//! Every command takes `--json` for machine-readable output. Exit codes: 0 success, 1 an error
//! (printed with its stable code), 2 a usage error. Output into a closed pipe ends the process
//! quietly, as Unix tools do. Human output shows control characters escaped (`\x1b`), since
//! titles, snippets and file names come from the wiki; JSON output is exact.

use std::process::ExitCode;

use clap::Parser;
use serde_json::json;

use crate::args::{Cli, Command};
use crate::render::{clean, esay};

mod args;
mod commands;
mod mcp;
mod model;
mod render;

/// The model runner allocates every operator's output afresh (up to 100 MB for a batch of
/// 256-token texts). glibc maps allocations over 128 KiB (rising to 32 MiB as they are freed)
/// from the kernel and unmaps them when freed, so each buffer was faulted in page by page on
/// every batch, and two embedding threads contended on the kernel's memory map for it (15% of
/// the time on long texts, seen with `perf`). Allocations under 128 MiB are served from the
/// heap, and freed memory kept for reuse: embedding long texts takes 0.92x the time.
/// Larger ones, the arrays of a large index, are still mapped, so the memory they free goes
/// back to the system: with every allocation in the heap, a build of a million pages peaked
/// at 4.18 GB instead of 3.55 GB.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // SAFETY: mallopt only changes allocator tuning parameters; it is called before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}

/// Rust ignores SIGPIPE, so printing into a closed pipe (`wikidex search ... | head -1`) is an
/// error, and `println!` panics on it (exit 101). Restoring the default action ends the
/// process quietly instead, as `cat` or `grep` end.
#[cfg(unix)]
fn quiet_on_closed_pipe() {
    // SAFETY: resets one signal's disposition to its default before any other thread exists;
    // no handler code is involved.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn quiet_on_closed_pipe() {}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    keep_freed_memory();
    let cli = Cli::parse();
    let json = match &cli.command {
        Command::Build(a) => a.json,
        Command::Merge(a) => a.json,
        Command::Sync(a) => a.json,
        Command::Search(a) => a.json,
        Command::Site(a) => a.json,
        Command::Page(a) => a.json,
        Command::Chunk(a) => a.json,
        Command::Eval(a) => a.json,
        Command::Embed(a) => a.json,
        Command::Lint(a) => a.json,
        Command::Neighbors(a) => a.json,
        Command::Verify(a) => a.json,
        Command::Mcp(_) => false,
        Command::Tool(a) => a.json,
        Command::Insights(a) => a.json,
    };
    let result = match cli.command {
        Command::Build(a) => commands::build(a),
        Command::Merge(a) => commands::merge(a),
        Command::Sync(a) => commands::sync(a),
        Command::Search(a) => commands::search(a),
        Command::Site(a) => commands::site(a),
        Command::Page(a) => commands::page(a),
        Command::Chunk(a) => commands::chunk(a),
        Command::Eval(a) => commands::evaluate(a),
        Command::Embed(a) => commands::embed(a),
        Command::Lint(a) => commands::lint(a),
        Command::Neighbors(a) => commands::neighbors(a),
        Command::Verify(a) => commands::verify(a),
        Command::Mcp(a) => commands::mcp(a),
        Command::Tool(a) => commands::tool(a),
        Command::Insights(a) => commands::insights(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if json {
                let v = json!({ "error": e.record() });
                println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            } else {
                esay!("error[{}]: {}", e.code(), clean(&e.to_string()));
            }
            ExitCode::FAILURE
        }
    }
}
