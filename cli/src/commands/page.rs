//! `wikidex page` and `wikidex chunk`: one page by key, one chunk by id, each read from the
//! blob in parts (its page's part, the graph and the raw layer), not loaded whole.

use std::process::ExitCode;

use wikidex::file::RangedFile;
use wikidex::Error;

use crate::args::{ChunkArgs, PageArgs};
use crate::render::{print_json, say};

pub(crate) fn page(a: PageArgs) -> Result<ExitCode, Error> {
    // Only the page's part and the graph are read, not the whole blob.
    let mut file = RangedFile::open(&a.index)?;
    let scope = a.scope.as_deref().map(|s| file.index().scope_named(s));
    let page = file.page_record(&a.key, scope.transpose()?.as_ref())?;
    if a.json {
        print_json(&page);
    } else {
        say!("{} — {}", page.id, page.title);
        if let Some(from) = &page.resolved_from {
            say!("(asked as `{from}`: an old key or an alias of this page)");
        }
        say!(
            "path: {}  scope: {}  usage: {}",
            page.path,
            page.scope,
            page.usage_mode.as_str()
        );
        if let Some(s) = &page.summary {
            say!("summary: {s}");
        }
        let list = |name: &str, v: &[String]| {
            if !v.is_empty() {
                say!("{name}: {}", v.join(", "));
            }
        };
        list("tags", &page.tags);
        list("refs", &page.refs);
        list("links", &page.links);
        list("aliases", &page.aliases);
        say!(
            "chunks: {}",
            page.chunks
                .iter()
                .map(|c| c.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        say!("\n{}", page.body.trim_end());
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn chunk(a: ChunkArgs) -> Result<ExitCode, Error> {
    // Only the chunk's page part (or the raw layer) is read, not the whole blob.
    let chunk = RangedFile::open(&a.index)?.chunk(&a.id)?;
    if a.json {
        print_json(&chunk);
    } else {
        say!(
            "{} ({} bytes {}..{}, hash {})",
            chunk.id,
            chunk.text.len(),
            chunk.start,
            chunk.end,
            chunk.hash
        );
        let under = if chunk.headings.is_empty() {
            String::new()
        } else {
            format!(", under {}", chunk.headings.join(" > "))
        };
        say!(
            "page: {} ({}:{}-{}{under})\n",
            chunk.key,
            chunk.path,
            chunk.line_start,
            chunk.line_end
        );
        if let Some(header) = &chunk.table_header {
            say!("(continues the table)\n{header}");
        }
        say!("{}", chunk.text);
    }
    Ok(ExitCode::SUCCESS)
}
