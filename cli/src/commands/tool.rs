//! `wikidex tool`: one agent tool run from the command line, or the tools' definitions.

use std::process::ExitCode;

use wikidex::{Error, Session, Tools};

use super::common::{attach_log, attach_model, close_log, read_stdin};
use crate::args::ToolArgs;
use crate::render::{clean, print_json, say};

/// Longest tool arguments `tool NAME -` reads from standard input.
const MAX_STDIN_ARGS_BYTES: usize = 4 << 20;

pub(crate) fn tool(a: ToolArgs) -> Result<ExitCode, Error> {
    let limits = a.limits.limits();
    let Some(name) = a.name.as_deref() else {
        print_json(&Tools::new(limits)?.definitions());
        return Ok(ExitCode::SUCCESS);
    };
    let session = Session::open(&a.index)?;
    session.set_tool_limits(limits)?;
    attach_model(&session, &a.embed)?;
    let log = attach_log(&session, a.log.as_deref(), "cli")?;
    let args = if a.args == "-" {
        read_stdin("the tool's arguments", MAX_STDIN_ARGS_BYTES)?
    } else {
        a.args.clone()
    };
    let result = session.call_tool(name, &args)?;
    close_log(log)?;
    if a.json {
        print_json(&result);
    } else {
        print!("{}", clean(&result.text));
        if !result.text.ends_with('\n') {
            say!();
        }
    }
    Ok(ExitCode::SUCCESS)
}
