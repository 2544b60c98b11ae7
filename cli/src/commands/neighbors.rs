//! `wikidex neighbors`: the page graph around some pages, with its evidence.

use std::process::ExitCode;

use wikidex::{Error, Index};

use super::common::scope_arg;
use crate::args::NeighborsArgs;
use crate::render::{print_json, say};

pub(crate) fn neighbors(a: NeighborsArgs) -> Result<ExitCode, Error> {
    let index = Index::open(&a.index)?;
    let opts = wikidex::TraverseOptions {
        depth: a.depth,
        min_confidence: a.min_confidence,
        max_nodes: usize::from(a.max_nodes),
        scope: scope_arg(&index, a.scope.as_deref())?,
    };
    let mut seeds: Vec<&str> = vec![a.key.as_str()];
    seeds.extend(a.seeds.iter().map(String::as_str));
    let g = index.neighbors(&seeds, &opts)?;
    // As `page` and `chunk` do: a key that names no page is an error, not an empty graph.
    if let Some(key) = g.unknown_seeds.first() {
        return Err(Error::UnknownPage { key: key.clone() });
    }
    if a.json {
        print_json(&g);
        return Ok(ExitCode::SUCCESS);
    }
    for s in &g.unknown_seeds {
        say!("unknown seed: {s}");
    }
    for n in &g.nodes {
        let stale = n
            .stale_since
            .as_deref()
            .map(|s| format!(" [stale since {s}]"))
            .unwrap_or_default();
        say!(
            "{}{} — {} (depth {}, confidence {:.2}){stale}",
            "  ".repeat(n.depth as usize),
            n.id,
            n.title,
            n.depth,
            n.confidence
        );
        for p in &n.sources {
            say!(
                "{}  source {} ({})",
                "  ".repeat(n.depth as usize),
                p.chunk,
                p.weight
            );
        }
    }
    if !g.chain.is_empty() {
        say!("\nevidence:");
        for line in &g.chain {
            say!("  {line}");
        }
    }
    let typed: Vec<&wikidex::GraphEdge> = g.edges.iter().filter(|e| e.evidence.is_some()).collect();
    if !typed.is_empty() {
        say!("\nedges:");
        for e in typed {
            let chunk = e
                .chunk
                .as_deref()
                .map(|c| format!(" [{c}]"))
                .unwrap_or_default();
            say!(
                "  {} --[{}]--> {} ({:.2}){chunk}: {}",
                e.from,
                e.kind,
                e.to,
                e.confidence,
                e.evidence.as_deref().unwrap_or_default()
            );
        }
    }
    if g.truncated {
        say!("\n(truncated to {} nodes)", g.nodes.len());
    }
    Ok(ExitCode::SUCCESS)
}
