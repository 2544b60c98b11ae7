//! `wikidex eval`: retrieval quality on a BEIR-layout collection, per lane and fused.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::{json, Value};
use wikidex::{eval, Error, Lane, SearchOptions, Session, Source};

use super::build::build_session;
use crate::args::{EmbedBuildArgs, EvalArgs};
use crate::model::ModelArgs;
use crate::render::{print_json, say, vectors_json};

pub(crate) fn evaluate(a: EvalArgs) -> Result<ExitCode, Error> {
    let config = a.config.config()?;
    let lanes = match &a.lanes {
        Some(l) => Lane::parse_list(l)?,
        None => Lane::ALL.to_vec(),
    };
    // The corpus is embedded (and the model loaded) only when the semantic lane is measured.
    let semantic = lanes.contains(&Lane::Semantic);
    let collection = eval::load_collection(&a.dir)?;
    let build_started = Instant::now();
    let (session, report) = match &a.index {
        Some(path) => {
            if !a.config.only_fusion() {
                return Err(Error::InvalidArgument {
                    detail: "with --index only --weight and --rrf-k apply (the index was \
                             built with its own analysis and chunking)"
                        .into(),
                });
            }
            let session = Session::open(path)?;
            session.set_fusion(config.fusion)?;
            if semantic && session.index().vectors().is_some() && !a.embed.no_embed {
                if let Some(note) = a.embed.model.attach_for_search(&session)? {
                    return Err(Error::InvalidArgument { detail: note });
                }
            }
            let report = wikidex::BuildReport {
                pages: session.index().pages().len(),
                chunks: session.index().chunk_count(),
                ..Default::default()
            };
            (session, report)
        }
        None => {
            let no_embed = EmbedBuildArgs {
                model: ModelArgs::default(),
                no_embed: true,
                vectors: "f32".into(),
            };
            let embed = if semantic { &a.embed } else { &no_embed };
            let source = Source::Beir(a.dir.join("corpus.jsonl"));
            let session = build_session(source, &embed.options(config.clone())?, embed, a.json)?;
            let report = session.build_report().unwrap_or_default();
            (session, report)
        }
    };
    let build_seconds = build_started.elapsed().as_secs_f64();
    let runs: Vec<(String, Vec<Lane>)> = lanes
        .iter()
        .map(|&l| (l.name().to_string(), vec![l]))
        .collect();
    let mut skipped = serde_json::Map::new();
    let mut results = serde_json::Map::new();
    let mut available = Vec::new();
    for (name, run_lanes) in &runs {
        let (metrics, seconds, status) =
            run_queries(&session, &collection, run_lanes, !a.no_typos, a.repeat)?;
        match status {
            Some(reason) => {
                skipped.insert(name.clone(), json!(reason));
            }
            None => {
                available.push(run_lanes[0]);
                results.insert(name.clone(), run_json(metrics, seconds));
            }
        }
    }
    if available.len() > 1 {
        let (metrics, seconds, _) =
            run_queries(&session, &collection, &available, !a.no_typos, a.repeat)?;
        results.insert("fused".into(), run_json(metrics, seconds));
    }
    let out = json!({
        "collection": collection.name,
        "queries": collection.queries.len(),
        "documents": report.pages,
        "chunks": report.chunks,
        "build_seconds": build_seconds,
        "config": session.config(),
        "typos": !a.no_typos,
        "embeddings": vectors_json(&session.index()),
        "runs": results,
        "skipped": skipped,
    });
    if a.json {
        print_json(&out);
    } else {
        say!(
            "{}: {} queries, {} documents ({} chunks), built in {:.2}s",
            collection.name,
            collection.queries.len(),
            report.pages,
            report.chunks,
            build_seconds
        );
        say!(
            "{:<10} {:>8} {:>8} {:>10} {:>9} {:>9}",
            "run",
            "nDCG@10",
            "MAP",
            "recall@100",
            "seconds",
            "q/s"
        );
        for (name, v) in &results {
            let f = |k: &str| v[k].as_f64().unwrap_or(0.0);
            let qps = collection.queries.len() as f64 / f("query_seconds").max(1e-12);
            say!(
                "{name:<10} {:>8.4} {:>8.4} {:>10.4} {:>9.4} {:>9.0}",
                f("ndcg@10"),
                f("map"),
                f("recall@100"),
                f("query_seconds"),
                qps
            );
        }
        for (name, reason) in &skipped {
            say!(
                "{name:<10} skipped: {}",
                reason.as_str().unwrap_or_default()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn run_json(m: eval::Metrics, seconds: f64) -> Value {
    json!({"ndcg@10": m.ndcg_10, "map": m.map, "recall@100": m.recall_100, "query_seconds": seconds})
}

/// Runs every query with `lanes` (top 100 pages, ranking only: no hits are hydrated; typo
/// tolerance on or off) `repeat` times, keeps the fastest loop, and scores the run. Returns the reason instead of metrics
/// when a single lane is not available in this index.
fn run_queries(
    session: &Session,
    collection: &eval::Collection,
    lanes: &[Lane],
    typos: bool,
    repeat: u32,
) -> Result<(eval::Metrics, f64, Option<String>), Error> {
    let opts = SearchOptions {
        limit: Some(wikidex::MAX_LIMIT),
        lanes: Some(lanes.to_vec()),
        snippets: false,
        typos,
        ..SearchOptions::default()
    };
    if let [lane] = lanes {
        let status = session.lane_status(*lane);
        if let Some(reason) = status.reason() {
            return Ok((eval::Metrics::default(), 0.0, Some(reason.to_string())));
        }
    }
    let mut best = f64::INFINITY;
    let mut ranked: Vec<Vec<wikidex::Ranked>> = Vec::new();
    let index = session.index();
    for _ in 0..repeat {
        ranked.clear();
        let started = Instant::now();
        for (_, text) in &collection.queries {
            ranked.push(session.rank(text, &opts)?.1);
        }
        best = best.min(started.elapsed().as_secs_f64());
    }
    let pages = index.pages();
    let run: HashMap<String, Vec<String>> = collection
        .queries
        .iter()
        .zip(ranked)
        .map(|((qid, _), r)| {
            (
                qid.clone(),
                r.iter().map(|h| pages[h.page].key.clone()).collect(),
            )
        })
        .collect();
    Ok((eval::evaluate(collection, &run), best, None))
}
