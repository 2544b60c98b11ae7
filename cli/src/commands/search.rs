//! `wikidex search`.

use std::process::ExitCode;

use wikidex::file::RangedFile;
use wikidex::{AlwaysMode, Error, Lane, Scope, SearchOptions, SearchResults, Session, UsageMode};

use super::common::{attach_log, close_log, read_stdin, scope_arg};
use crate::args::SearchArgs;
use crate::render::{clean, esay, print_json, print_results, say};

/// Longest query `search -` reads from standard input (the index cuts queries much shorter;
/// this only bounds what is read).
const MAX_STDIN_QUERY_BYTES: usize = 1 << 20;

pub(crate) fn search(a: SearchArgs) -> Result<ExitCode, Error> {
    // A search that keeps no log and makes no prompt block reads only the parts of the blob it
    // needs (a million-chunk index answers in under a second, where a whole load takes about
    // 12 s): the semantic lane reads the vectors' section, not the rest.
    if !a.prompt && a.log.is_none() {
        let mut file = RangedFile::open(&a.index)?;
        let lanes = a.lanes.as_deref().map(Lane::parse_list).transpose()?;
        // A lane that is not asked for costs nothing: the model loads only for the semantic lane.
        if wants(lanes.as_deref(), Lane::Semantic) {
            let index = file.index();
            let (model, note) = a
                .model
                .for_search(index.vectors_model_id(), |m| index.check_model(m))?;
            file.set_model(model)?;
            note_lane(note, &a);
        }
        let scope = a.scope.as_deref().map(|s| file.index().scope_named(s));
        let opts = options(&a, lanes, scope.transpose()?)?;
        let results = file.search(&query(&a)?, &opts)?;
        print(&results, &a);
        return Ok(ExitCode::SUCCESS);
    }
    let session = Session::open(&a.index)?;
    let log = attach_log(&session, a.log.as_deref(), "cli")?;
    let lanes = a.lanes.as_deref().map(Lane::parse_list).transpose()?;
    // A lane that is not asked for costs nothing: the model loads only for the semantic lane.
    if wants(lanes.as_deref(), Lane::Semantic) {
        note_lane(a.model.attach_for_search(&session)?, &a);
    }
    let scope = scope_arg(&session.index(), a.scope.as_deref())?;
    let opts = options(&a, lanes, scope)?;
    let results = session.search(&query(&a)?, &opts)?;
    close_log(log)?;
    if a.prompt {
        let block = session.index().prompt_block(&results);
        if a.json {
            print_json(&block);
        } else {
            print!("{}", clean(&block.text));
            say!("offered: {}", block.offered.join(","));
        }
        return Ok(ExitCode::SUCCESS);
    }
    print(&results, &a);
    Ok(ExitCode::SUCCESS)
}

/// The search options the arguments give.
fn options(
    a: &SearchArgs,
    lanes: Option<Vec<Lane>>,
    scope: Option<Scope>,
) -> Result<SearchOptions, Error> {
    let usage_modes = a
        .usage_modes
        .iter()
        .map(|m| UsageMode::parse(m))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SearchOptions {
        limit: Some(usize::from(a.limit)),
        lanes,
        tags: a.tags.clone(),
        types: a.types.clone(),
        scope,
        usage_modes,
        chunks: a.chunks,
        always: if a.always_first {
            AlwaysMode::First
        } else {
            AlwaysMode::Separate
        },
        explain: a.explain,
        snippets: true,
        query_vector: None,
        typos: !a.no_typos,
        facets: a.facets,
        since: a.since.clone(),
        until: a.until.clone(),
    })
}

/// The query: the argument, or standard input for `-` (without its line end).
fn query(a: &SearchArgs) -> Result<String, Error> {
    let query = if a.query == "-" {
        read_stdin("the query", MAX_STDIN_QUERY_BYTES)?
    } else {
        a.query.clone()
    };
    Ok(query.trim_end_matches(['\n', '\r']).to_string())
}

/// Prints `results` as JSON or as text.
fn print(results: &SearchResults, a: &SearchArgs) {
    if a.json {
        print_json(results);
    } else {
        print_results(results, a.explain);
    }
}

/// Says on stderr why the semantic lane cannot run (not with `--json`, whose lane statuses say).
fn note_lane(note: Option<String>, a: &SearchArgs) {
    if let (Some(note), false) = (note, a.json) {
        esay!("note: {note}");
    }
}

/// Whether a `--lanes` list (`None`: every lane) includes `lane`.
fn wants(lanes: Option<&[Lane]>, lane: Lane) -> bool {
    lanes.is_none_or(|l| l.contains(&lane))
}
