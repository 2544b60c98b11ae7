//! What several commands share: reading standard input, checking `--scope`, attaching a
//! query log and a model to a session.

use std::path::Path;
use std::sync::Arc;

use wikidex::querylog::JsonlLog;
use wikidex::{Error, Index, QueryLog, Scope, Session};

use crate::args::EmbedBuildArgs;
use crate::render::esay;

/// Standard input as text, refused past `limit` bytes.
pub(crate) fn read_stdin(what: &str, limit: usize) -> Result<String, Error> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::Io {
            path: "<stdin>".into(),
            source: e,
        })?;
    if bytes.len() > limit {
        return Err(Error::TooLarge {
            what: format!("{what} on standard input (bytes)"),
            limit: limit as u64,
            found: bytes.len() as u64,
        });
    }
    String::from_utf8(bytes).map_err(|e| Error::InvalidArgument {
        detail: format!("{what} on standard input is not UTF-8: {e}"),
    })
}

/// The `--scope` value, checked against the index: `global`, or a user scope that has pages
/// (a misspelled user name would otherwise quietly search as that empty scope, which sees
/// only the global pages).
pub(crate) fn scope_arg(index: &Index, scope: Option<&str>) -> Result<Option<Scope>, Error> {
    scope.map(|s| index.scope_named(s)).transpose()
}

/// Logs `session`'s searches and citation checks to `path` (JSON Lines), as `origin`.
pub(crate) fn attach_log(
    session: &Session,
    path: Option<&Path>,
    origin: &str,
) -> Result<Option<Arc<JsonlLog>>, Error> {
    let Some(path) = path else {
        return Ok(None);
    };
    let log = Arc::new(JsonlLog::open(path)?);
    session.set_query_log(Some(Arc::clone(&log) as Arc<dyn QueryLog>), origin);
    Ok(Some(log))
}

/// Writes what the log has queued; reports a failed write.
pub(crate) fn close_log(log: Option<Arc<JsonlLog>>) -> Result<(), Error> {
    match log {
        Some(log) => log.close(),
        None => Ok(()),
    }
}

/// Sets the model `session`'s vectors were made with (unless `--no-embed`), for the
/// semantic lane of the agent tools' searches.
pub(crate) fn attach_model(session: &Session, embed: &EmbedBuildArgs) -> Result<(), Error> {
    if !embed.no_embed {
        if let Some(note) = embed.model.attach_for_search(session)? {
            esay!("note: {note}");
        }
    }
    Ok(())
}
