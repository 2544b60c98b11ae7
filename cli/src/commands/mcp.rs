//! `wikidex mcp`: checks its arguments, makes the session, and hands it to the server
//! ([`crate::mcp`]).

use std::process::ExitCode;

use wikidex::{Config, Error, Session, Source};

use super::build::build_session;
use super::common::{attach_log, attach_model, close_log};
use super::sync::sync_blob;
use crate::args::McpArgs;
use crate::mcp;
use crate::render::{clean, esay};

pub(crate) fn mcp(a: McpArgs) -> Result<ExitCode, Error> {
    /// Longest `--watch` period: a day.
    const MAX_WATCH_SECS: f64 = 86_400.0;
    let limits = a.limits.limits();
    let folder = a.source.is_dir();
    // `Duration::from_secs_f64` panics past about 1.8e19 seconds; a day between two looks is
    // already more than any use of watching.
    if !(0.0..=MAX_WATCH_SECS).contains(&a.watch) {
        return Err(Error::InvalidArgument {
            detail: format!(
                "--watch must be a number of seconds from 0 to {MAX_WATCH_SECS}; got {}",
                a.watch
            ),
        });
    }
    if a.index.is_some() && !folder {
        return Err(Error::InvalidArgument {
            detail: "--index keeps a served folder's index; the source is not a folder".into(),
        });
    }
    let options = a.embed.options(Config::default())?;
    let (session, skipped) = if folder {
        match &a.index {
            Some(blob) => {
                let session = sync_blob(&a.source, blob, &options, &a.embed, true)?;
                let skipped = session.build_report().unwrap_or_default().skipped;
                (session, skipped)
            }
            None => {
                let source = Source::Folder(a.source.clone());
                let session = build_session(source, &options, &a.embed, true)?;
                let skipped = session.build_report().unwrap_or_default().skipped;
                (session, skipped)
            }
        }
    } else {
        let session = Session::open(&a.source)?;
        attach_model(&session, &a.embed)?;
        (session, Vec::new())
    };
    session.set_tool_limits(limits)?;
    for s in &skipped {
        esay!(
            "skipped {}: [{}] {}",
            clean(&s.path),
            s.code,
            clean(&s.reason)
        );
    }
    let log = attach_log(&session, a.log.as_deref(), "mcp")?;
    let watch = (folder && a.watch > 0.0).then(|| mcp::Watch {
        dir: a.source.clone(),
        blob: a.index.clone(),
        every: std::time::Duration::from_secs_f64(a.watch),
    });
    mcp::serve(session, watch)?;
    close_log(log)?;
    Ok(ExitCode::SUCCESS)
}
