//! `wikidex sync`, and the sync of a blob with its folder that `mcp --index` runs too.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::json;
use wikidex::{BuildOptions, Config, Error, Session, SyncRecord};

use crate::args::{EmbedBuildArgs, SyncArgs};
use crate::render::{clean, esay, print_json, print_problems, say, vectors_json, with_progress};

/// Brings the blob at `blob` up to date with `dir` ([`Session::sync_file`]), with progress
/// bars; a blob with embeddings and no model found is an error naming the flags.
pub(crate) fn sync_blob(
    dir: &Path,
    blob: &Path,
    options: &BuildOptions,
    embed: &EmbedBuildArgs,
    quiet: bool,
) -> Result<Session, Error> {
    let model = embed.embedder(quiet)?;
    let synced = with_progress(quiet, |progress| {
        Session::sync_file(dir, blob, options, model, embed.no_embed, progress)
    });
    if let Some(record) = synced.as_ref().ok().and_then(Session::sync_record) {
        if let (Some(why), false) = (&record.full, quiet) {
            esay!("note: {why}: indexed every file");
        }
    }
    synced.map_err(|e| match e {
        Error::NoEmbedder { detail } => Error::NoEmbedder {
            detail: format!("{detail} (pass --model DIR, or --no-embed to drop them)"),
        },
        e => e,
    })
}

pub(crate) fn sync(a: SyncArgs) -> Result<ExitCode, Error> {
    let started = Instant::now();
    let options = BuildOptions {
        raw: a.raw.clone(),
        follow_outside_root: a.follow_outside_root,
        file_times: !a.no_file_times,
        ..a.embed.options(Config::default())?
    };
    let session = sync_blob(&a.dir, &a.output, &options, &a.embed, a.json)?;
    let SyncRecord {
        full,
        written: write,
        report,
    } = session.sync_record().unwrap_or_default();
    let index = session.index();
    let seconds = started.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&a.output).map(|m| m.len()).unwrap_or(0);
    let b = &report.build;
    if a.json {
        print_json(&json!({
            "output": a.output.display().to_string(),
            "full": full,
            "written": write,
            "added": report.added,
            "changed": report.changed,
            "removed": report.removed,
            "unchanged": report.unchanged,
            "embedded": report.embedded,
            "pages": b.pages,
            "chunks": b.chunks,
            "embeddings": vectors_json(&index),
            "raw_documents": b.raw_documents,
            "raw_chunks": b.raw_chunks,
            "bytes": bytes,
            "skipped": b.skipped,
            "warnings": b.warnings,
            "seconds": seconds,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if write { "synced" } else { "up to date:" };
    say!(
        "{verb} {}: {} added, {} changed, {} removed, {} unchanged; {} pages, {} chunks, {} embedded, {} bytes in {:.2}s",
        a.output.display(),
        report.added.len(),
        report.changed.len(),
        report.removed.len(),
        report.unchanged,
        b.pages,
        b.chunks,
        report.embedded,
        bytes,
        seconds
    );
    if full.is_none() {
        for (mark, paths) in [
            ("+", &report.added),
            ("~", &report.changed),
            ("-", &report.removed),
        ] {
            for p in paths {
                say!("  {mark} {}", clean(p));
            }
        }
    }
    print_problems(b);
    Ok(ExitCode::SUCCESS)
}
