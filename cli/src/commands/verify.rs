//! `wikidex verify`: an answer's citations checked against an index.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use wikidex::{Error, Session};

use super::common::{attach_log, close_log, read_stdin};
use crate::args::VerifyArgs;
use crate::render::{print_json, say};

pub(crate) fn verify(a: VerifyArgs) -> Result<ExitCode, Error> {
    let session = Session::open(&a.index)?;
    let log = attach_log(&session, a.log.as_deref(), "cli")?;
    let answer = if a.answer == "-" {
        read_stdin("the answer", wikidex::cite::MAX_ANSWER_BYTES)?
    } else {
        wikidex::file::read_text_capped(
            Path::new(&a.answer),
            wikidex::cite::MAX_ANSWER_BYTES as u64,
            "answer bytes",
        )?
    };
    let cited: Vec<wikidex::cite::Cited> = a
        .cite
        .iter()
        .filter(|c| !c.trim().is_empty())
        .map(|c| wikidex::cite::Cited::parse(c))
        .collect();
    let offered: Vec<String> = a
        .offered
        .iter()
        .map(|o| o.trim().to_string())
        .filter(|o| !o.is_empty())
        .collect();
    let wikidex::AnswerCheck {
        verification: v,
        support,
    } = session.check_answer(&answer, &cited, &offered)?;
    close_log(log)?;
    if a.json {
        print_json(&json!({"citations": v.citations, "passed": v.passed, "support": support}));
    } else {
        for c in &v.citations {
            let span = c
                .quote
                .map(|q| format!(": \"{}\"", &answer[q.answer_start..q.answer_end]))
                .unwrap_or_default();
            say!("{:<10} {}{span}", c.status.name(), c.id);
        }
        for s in &support.uncited {
            say!(
                "uncited sentence (matches {}): {}",
                s.best_chunk.as_deref().unwrap_or("?"),
                s.text
            );
        }
        for s in &support.unsupported {
            say!("unsupported sentence: {}", s.text);
        }
        say!("{}", if v.passed { "passed" } else { "FAILED" });
    }
    Ok(if v.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
