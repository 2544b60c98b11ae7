//! `wikidex insights`: what a query log says about the wiki.

use std::process::ExitCode;

use wikidex::{querylog, Error, Index};

use crate::args::InsightsArgs;
use crate::render::{clean, print_json, say};

pub(crate) fn insights(a: InsightsArgs) -> Result<ExitCode, Error> {
    let text = wikidex::file::read_text_capped(&a.log, u64::MAX, "query log bytes")?;
    let (entries, bad) = querylog::read_log(&text);
    let pages: Option<Vec<String>> = match &a.index {
        Some(p) => Some(Index::open(p)?.pages().iter().map(|p| p.id()).collect()),
        None => None,
    };
    let r = querylog::insights(&entries, bad, pages.as_deref(), a.top.max(1));
    if a.json {
        print_json(&r);
        return Ok(ExitCode::SUCCESS);
    }
    say!(
        "{} searches, {} citation checks{}",
        r.searches,
        r.verifies,
        if r.bad_lines > 0 {
            format!(", {} lines that are not log entries", r.bad_lines)
        } else {
            String::new()
        }
    );
    let list = |title: &str, counts: &[querylog::Count]| {
        say!();
        say!("{title}:");
        if counts.is_empty() {
            say!("  (none)");
        }
        for c in counts {
            say!("  {:>5}  {}", c.count, clean(&c.key));
        }
    };
    list("queries with no results (content gaps)", &r.zero_result);
    list("most frequent queries", &r.frequent);
    list("most cited pages", &r.cited_pages);
    list("most cited chunks", &r.cited_chunks);
    if let Some(never) = &r.never_cited {
        say!();
        say!("pages never cited ({}):", never.len());
        for p in never.iter().take(a.top.max(1)) {
            say!("  {}", clean(p));
        }
        if never.len() > a.top.max(1) {
            say!(
                "  ... and {} more (--json lists all)",
                never.len() - a.top.max(1)
            );
        }
    }
    say!();
    say!(
        "citations checked: {}, drifted {:.1}%, unknown {:.1}%",
        r.citations,
        r.drifted_share * 100.0,
        r.unknown_share * 100.0
    );
    Ok(ExitCode::SUCCESS)
}
