//! `wikidex build` and `wikidex merge`, and the build with progress bars that `eval` and `mcp`
//! run too.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use wikidex::{BuildOptions, Error, Index, Session, Source};

use crate::args::{BuildArgs, EmbedBuildArgs, MergeArgs};
use crate::render::{esay, print_json, print_problems, say, vectors_json, with_progress};

/// Builds a session over `source` with the model `embed` names (if any), with progress bars.
pub(crate) fn build_session(
    source: Source,
    options: &BuildOptions,
    embed: &EmbedBuildArgs,
    quiet: bool,
) -> Result<Session, Error> {
    let model = embed.model_choice(quiet)?;
    let session = with_progress(quiet, |progress| {
        Session::build_with_model(source, options, model, progress)
    })?;
    // The model was chosen once the pages were read: what the build says of it goes to
    // stderr, once (the `--json` output has it too).
    if !quiet {
        let report = session.build_report().unwrap_or_default();
        for note in report.semantic_off.iter().chain(&report.model_notice) {
            esay!("note: {note}");
        }
    }
    Ok(session)
}

pub(crate) fn build(a: BuildArgs) -> Result<ExitCode, Error> {
    let started = Instant::now();
    let options = BuildOptions {
        strict: a.strict,
        raw: a.raw.clone(),
        follow_outside_root: a.follow_outside_root,
        file_times: !a.no_file_times,
        ..a.embed.options(a.config.config()?)?
    };
    let source = if a.beir {
        Source::Beir(a.dir.join("corpus.jsonl"))
    } else {
        Source::Folder(a.dir.clone())
    };
    write_built(source, &options, &a.embed, &a.output, a.json, started)
}

pub(crate) fn merge(a: MergeArgs) -> Result<ExitCode, Error> {
    let started = Instant::now();
    let options = BuildOptions {
        strict: a.strict,
        file_times: !a.no_file_times,
        ..a.embed.options(a.config.config()?)?
    };
    let shards = a
        .shards
        .iter()
        .map(|path| Index::open(path).map(Arc::new))
        .collect::<Result<Vec<_>, Error>>()?;
    write_built(
        Source::Indexes(shards),
        &options,
        &a.embed,
        &a.output,
        a.json,
        started,
    )
}

/// Builds from `source`, saves the index to `output` and reports it (`build`, `merge`).
fn write_built(
    source: Source,
    options: &BuildOptions,
    embed: &EmbedBuildArgs,
    output: &Path,
    json: bool,
    started: Instant,
) -> Result<ExitCode, Error> {
    let session = build_session(source, options, embed, json)?;
    let (index, report) = (session.index(), session.build_report().unwrap_or_default());
    let embeddings = vectors_json(&index);
    let language = index.config().language().name();
    let vectors_line = match index.vectors() {
        Some(v) => format!(
            "  embeddings: {} ({} x {}, {}), semantic floor {:.3}",
            v.model_id,
            v.len(),
            v.dim,
            v.encoding().name(),
            v.floor
        ),
        None => "  embeddings: none (semantic lane unavailable)".to_string(),
    };
    drop(session);
    // The only holder now: the save drops the index once it is encoded, so checking that the
    // blob loads does not hold it twice.
    match std::sync::Arc::try_unwrap(index) {
        Ok(index) => index.save_into(output)?,
        Err(shared) => shared.save(output)?,
    }
    let seconds = started.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(output).map(|m| m.len()).unwrap_or(0);
    if json {
        print_json(&json!({
            "output": output.display().to_string(),
            "pages": report.pages,
            "chunks": report.chunks,
            "embeddings": embeddings,
            "raw_documents": report.raw_documents,
            "raw_chunks": report.raw_chunks,
            "bytes": bytes,
            "skipped": report.skipped,
            "warnings": report.warnings,
            "languages": report.languages,
            "language": language,
            "language_reason": report.language_reason,
            "model_reason": report.model_reason,
            "model_notice": report.model_notice,
            "semantic_off": report.semantic_off,
            "seconds": seconds,
        }));
    } else {
        let raw = if report.raw_documents > 0 {
            format!(
                ", {} raw documents ({} chunks)",
                report.raw_documents, report.raw_chunks
            )
        } else {
            String::new()
        };
        say!(
            "built {}: {} pages, {} chunks{raw}, {} bytes in {:.2}s",
            output.display(),
            report.pages,
            report.chunks,
            bytes,
            seconds
        );
        say!("{vectors_line}");
        say!("  languages: {}", report.languages.describe());
        if let Some(why) = &report.language_reason {
            say!("  analysis: {why}");
        }
        if let Some(why) = &report.model_reason {
            say!("  model: {why}");
        }
        print_problems(&report);
    }
    Ok(ExitCode::SUCCESS)
}
