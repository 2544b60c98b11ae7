//! `wikidex search`.

use std::process::ExitCode;

use wikidex::{AlwaysMode, Error, Lane, SearchOptions, Session, UsageMode};

use super::common::{attach_log, close_log, read_stdin, scope_arg};
use crate::args::SearchArgs;
use crate::render::{clean, esay, print_json, print_results, say};

/// Longest query `search -` reads from standard input (the index cuts queries much shorter;
/// this only bounds what is read).
const MAX_STDIN_QUERY_BYTES: usize = 1 << 20;

pub(crate) fn search(a: SearchArgs) -> Result<ExitCode, Error> {
    let session = Session::open(&a.index)?;
    let log = attach_log(&session, a.log.as_deref(), "cli")?;
    let lanes = a.lanes.as_deref().map(Lane::parse_list).transpose()?;
    // A lane that is not asked for costs nothing: the model loads only for the semantic lane.
    if wants(lanes.as_deref(), Lane::Semantic) {
        if let Some(note) = a.model.attach_for_search(&session)? {
            if !a.json {
                esay!("note: {note}");
            }
        }
    }
    let usage_modes = a
        .usage_modes
        .iter()
        .map(|m| UsageMode::parse(m))
        .collect::<Result<Vec<_>, _>>()?;
    let opts = SearchOptions {
        limit: Some(usize::from(a.limit)),
        lanes,
        tags: a.tags,
        types: a.types,
        scope: scope_arg(&session.index(), a.scope.as_deref())?,
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
        since: a.since,
        until: a.until,
    };
    let query = if a.query == "-" {
        read_stdin("the query", MAX_STDIN_QUERY_BYTES)?
    } else {
        a.query.clone()
    };
    let results = session.search(query.trim_end_matches(['\n', '\r']), &opts)?;
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
    if a.json {
        print_json(&results);
    } else {
        print_results(&results, a.explain);
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether a `--lanes` list (`None`: every lane) includes `lane`.
fn wants(lanes: Option<&[Lane]>, lane: Lane) -> bool {
    lanes.is_none_or(|l| l.contains(&lane))
}
