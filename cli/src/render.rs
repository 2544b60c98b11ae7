//! Output: human text with control characters escaped, JSON, progress bars, and the
//! renderings more than one command shares.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::ops::ControlFlow;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};
use wikidex::{BuildStage, Hit, Index, SearchResults};

/// `println!` for human output: the line with control characters escaped (see [`clean`]).
macro_rules! say {
    () => {
        println!()
    };
    ($($arg:tt)*) => {
        println!("{}", $crate::render::clean(&format!($($arg)*)))
    };
}

/// `eprintln!` for human messages, escaped like [`say!`].
macro_rules! esay {
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::render::clean(&format!($($arg)*)))
    };
}

pub(crate) use {esay, say};

/// `text` with the control characters a terminal would act on shown as escapes: C0 controls
/// other than newline and tab (ESC among them), DEL, and C1 controls. A page title like
/// `ESC[2J` would otherwise clear the user's screen, and `ESC]0;...BEL` retitle the window.
pub(crate) fn clean(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hostile_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_clean(&mut out, c);
    }
    Cow::Owned(out)
}

fn is_hostile_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || ('\u{80}'..='\u{9f}').contains(&c)
}

fn push_clean(out: &mut String, c: char) {
    use std::fmt::Write;
    if !is_hostile_control(c) {
        out.push(c);
    } else if (c as u32) < 0x80 {
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
    }
}

pub(crate) fn print_json(v: &impl serde::Serialize) {
    match serde_json::to_string_pretty(v) {
        Ok(s) => println!("{s}"),
        Err(e) => esay!("error: cannot print JSON: {e}"),
    }
}

fn progress_bar(len: u64, what: &str, quiet: bool) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if quiet || !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let style = ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len} ({eta})")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(what.to_string());
    bar
}

/// Runs `work` (a build) with progress bars for analysis and embedding (none when `quiet`).
pub(crate) fn with_progress<T>(
    quiet: bool,
    work: impl FnOnce(&mut dyn FnMut(BuildStage, usize, usize) -> ControlFlow<()>) -> T,
) -> T {
    let mut stage = BuildStage::Pages;
    let mut bar = progress_bar(0, "indexing", quiet);
    let out = work(&mut |s, done, total| {
        if s != stage {
            bar.finish_and_clear();
            bar = progress_bar(0, "embedding", quiet);
            stage = s;
        }
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        ControlFlow::Continue(())
    });
    bar.finish_and_clear();
    out
}

/// The vector section's identity, for reports.
pub(crate) fn vectors_json(index: &Index) -> Value {
    index.vectors().map_or(Value::Null, |v| {
        json!({
            "model": v.model_id,
            "fingerprint": v.fingerprint,
            "dim": v.dim,
            "encoding": v.encoding().name(),
            "floor": v.floor,
        })
    })
}

/// The files a build skipped and the warnings of the pages it parsed, one line each.
pub(crate) fn print_problems(report: &wikidex::BuildReport) {
    for s in &report.skipped {
        let line = s.line.map(|l| format!(":{l}")).unwrap_or_default();
        say!("  skipped {}{line}: [{}] {}", s.path, s.code, s.reason);
    }
    for w in &report.warnings {
        say!("  warning {}: {}", w.path, w.message);
    }
}

/// The weight each lane that ran got for this query, and why (`wikidex::lane::evidence`).
fn print_weights(r: &SearchResults) {
    let ran = || r.lanes.iter().filter(|l| l.status.name() == "ok");
    let weights: Vec<String> = ran()
        .map(|l| format!("{} {}", l.lane.name(), l.weight))
        .collect();
    if weights.is_empty() {
        return;
    }
    let why = match ran().find_map(|l| l.known) {
        Some(known) if known < wikidex::lane::evidence::MIN_KNOWN_SHARE => format!(
            " (the index reads {:.0}% of the query's term weight, below {:.0}%: the word lanes \
             get weight 0)",
            known * 100.0,
            wikidex::lane::evidence::MIN_KNOWN_SHARE * 100.0
        ),
        Some(known) => format!(
            " (the index reads {:.0}% of the query's term weight)",
            known * 100.0
        ),
        None => String::new(),
    };
    say!("  weights: {}{why}", weights.join(", "));
}

pub(crate) fn print_results(r: &SearchResults, explain: bool) {
    let lanes: Vec<String> = r
        .lanes
        .iter()
        .map(|l| format!("{} {}", l.lane.name(), l.status.name()))
        .collect();
    let truncated = if r.truncated { " (query cut)" } else { "" };
    say!(
        "{} hit{} for \"{}\"{truncated}  [{}]",
        r.hits.len(),
        if r.hits.len() == 1 { "" } else { "s" },
        r.query,
        lanes.join(", ")
    );
    let reasons: Vec<&str> = r.lanes.iter().filter_map(|l| l.status.reason()).collect();
    if !reasons.is_empty() && reasons.iter().all(|&why| why == wikidex::NO_QUERY_TERMS) {
        say!("  note: {}", wikidex::NO_QUERY_TERMS);
    } else {
        for l in &r.lanes {
            if let Some(reason) = l.status.reason().filter(|_| l.status.name() != "ok") {
                if reason != wikidex::lane::NOT_REQUESTED {
                    say!(
                        "  note: {} lane {}: {reason}",
                        l.lane.name(),
                        l.status.name()
                    );
                }
            }
        }
    }
    if explain {
        print_weights(r);
    }
    if let Some(p) = &r.phrases {
        match &p.reason {
            Some(reason) => say!("  note: phrases: {reason}"),
            None => say!(
                "  phrases: {} hit{} hold{} \"{}\"",
                p.matched,
                if p.matched == 1 { "" } else { "s" },
                if p.matched == 1 { "s" } else { "" },
                p.phrases.join("\" and \"")
            ),
        }
    }
    let styled = std::io::stdout().is_terminal();
    for (i, hit) in r.hits.iter().enumerate() {
        say!();
        print_hit(i + 1, hit, explain, styled);
    }
    if !r.always.is_empty() {
        say!("\nalways:");
        for (i, hit) in r.always.iter().enumerate() {
            print_hit(i + 1, hit, explain, styled);
        }
    }
    if let Some(f) = &r.facets {
        let counts = |v: &[wikidex::FacetCount]| {
            v.iter()
                .map(|c| format!("{} ({})", c.value, c.count))
                .collect::<Vec<_>>()
                .join(", ")
        };
        say!("\nfacets over {} matching pages:", f.pages);
        say!("  tags: {}", counts(&f.tags));
        say!("  types: {}", counts(&f.types));
    }
}

fn print_hit(n: usize, hit: &Hit, explain: bool, styled: bool) {
    let mut flags = String::new();
    if hit.always {
        flags.push_str(" [always]");
    }
    if let Some(s) = &hit.stale_since {
        flags.push_str(&format!(" [stale since {s}]"));
    }
    say!("{n:>2}. {} — {}{flags}", hit.page_id, hit.title);
    say!(
        "    {}:{}-{} · {} · score {:.4}",
        hit.path,
        hit.line_start,
        hit.line_end,
        hit.chunk,
        hit.score
    );
    if !hit.headings.is_empty() {
        say!("    under {}", hit.headings.join(" > "));
    }
    if let Some(s) = &hit.summary {
        say!("    {s}");
    }
    if let Some(snip) = &hit.snippet {
        println!("    \"{}\"", mark(&snip.text, &snip.highlights, styled));
    }
    let lanes: Vec<String> = hit
        .lanes
        .iter()
        .map(|l| match (l.rank, l.score) {
            (Some(rank), Some(score)) => format!("{} #{rank} ({score:.3})", l.lane.name()),
            _ if l.status == wikidex::StatusKind::Ok => format!("{} —", l.lane.name()),
            _ => format!("{} {}", l.lane.name(), l.status.name()),
        })
        .collect();
    say!("    {}", lanes.join("  "));
    if explain {
        if let Some(ex) = &hit.explain {
            let shares: Vec<String> = hit
                .lanes
                .iter()
                .filter_map(|l| {
                    Some(format!(
                        "{} {:.4} (rank {})",
                        l.lane.name(),
                        l.contribution?,
                        l.rank?
                    ))
                })
                .collect();
            say!("    fused = {} (k = {})", shares.join(" + "), ex.k);
            for t in &ex.lexical {
                // A typo match names the term it was taken for: `incidnet~incid (1 edit)`.
                let term = match &t.matched {
                    Some(m) => format!(
                        "{}~{m} ({} edit{})",
                        t.term,
                        t.edits,
                        if t.edits == 1 { "" } else { "s" }
                    ),
                    None => t.term.clone(),
                };
                say!(
                    "    bm25 {:<14} tf {:>2}  df {:>5}  idf {:>6.3}  → {:.3}",
                    term,
                    t.tf,
                    t.df,
                    t.idf,
                    t.score
                );
            }
        }
    }
}

/// The snippet with highlighted terms: bold on a terminal, «guillemets» otherwise.
fn mark(text: &str, highlights: &[wikidex::Highlight], styled: bool) -> String {
    let (open, close) = if styled {
        ("\x1b[1m", "\x1b[0m")
    } else {
        ("«", "»")
    };
    let mut out = String::with_capacity(text.len() + highlights.len() * 8);
    let mut hl = highlights.iter().peekable();
    // Highlights are byte offsets (the Rust API's offset unit).
    for (i, c) in text.char_indices() {
        let i = i as u32;
        if hl.peek().is_some_and(|h| h.start == i) {
            out.push_str(open);
        }
        push_clean(&mut out, c);
        if let Some(h) = hl.peek() {
            if h.end == i + c.len_utf8() as u32 {
                out.push_str(close);
                hl.next();
            }
        }
    }
    out
}
