//! Retrieval quality on BEIR-layout collections: loading `corpus.jsonl`, `queries.jsonl` and
//! `qrels/test.tsv`, and the metrics as `trec_eval` computes them (nDCG@10 with linear gains,
//! MAP, recall@100; a document is relevant when its judgment is at least 1).
//!
//! Only queries with at least one relevant document in the qrels (and a text in
//! `queries.jsonl`) are evaluated. A query that returns nothing scores 0 and counts in the
//! average (`trec_eval -c`; plain `trec_eval` would skip it, and BEIR's evaluation does too).
//! Quotation marks in a query are read as spaces: in these collections they are prose (CACM's
//! queries cite paper titles in them), not phrase syntax, so the figures measure ranking on the
//! words, as bm25s sees them and as Anserini reads BEIR topics (bag of words). The same text
//! given to [`Index::search`](crate::Index::search) does search its quotes as phrases.
//! The ranked list is used in rank order: where fused scores tie, wikidex's tie rules (lanes
//! matched, then id) decide, where `trec_eval` would re-sort by document id.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::data::error::{Error, Result};

/// A BEIR collection's queries and judgments.
#[derive(Debug, Clone, PartialEq)]
pub struct Collection {
    /// The folder name (`cacm`).
    pub name: String,
    /// Evaluated queries `(id, text)`, in id order.
    pub queries: Vec<(String, String)>,
    /// Per query id: document id → relevance grade.
    pub qrels: HashMap<String, HashMap<String, i32>>,
}

/// Metrics of one run, averaged over queries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// nDCG at rank 10 (linear gains, `log2(rank + 1)` discount).
    #[serde(rename = "ndcg@10")]
    pub ndcg_10: f64,
    /// Mean average precision over the ranked list.
    pub map: f64,
    /// Share of relevant documents in the top 100.
    #[serde(rename = "recall@100")]
    pub recall_100: f64,
}

#[derive(Deserialize)]
struct BeirDoc {
    #[serde(rename = "_id")]
    id: serde_json::Value,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

fn id_string(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) if !s.is_empty() => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Parses one `corpus.jsonl` line into `(id, title, text)`.
///
/// # Errors
/// The reason, when the line is not a JSON object with a string or number `_id`.
pub fn beir_doc(line: &str) -> std::result::Result<(String, String, String), String> {
    let doc: BeirDoc =
        serde_json::from_str(line).map_err(|e| format!("not a BEIR document: {e}"))?;
    let id = id_string(&doc.id).ok_or("`_id` must be a non-empty string or a number")?;
    Ok((
        id,
        doc.title.unwrap_or_default(),
        doc.text.unwrap_or_default(),
    ))
}

/// Loads `queries.jsonl` and `qrels/test.tsv` from a BEIR folder.
///
/// # Errors
/// [`Error::Io`] for a missing file, [`Error::InvalidInput`] with the line for a malformed one.
pub fn load_collection(dir: &Path) -> Result<Collection> {
    let read = |name: &str| {
        let p = dir.join(name);
        crate::front::file::read_text_capped(&p, u64::MAX, "collection bytes")
    };
    let bad = |file: &str, line: usize, reason: String| Error::InvalidInput {
        path: dir.join(file).display().to_string(),
        line: u32::try_from(line).ok(),
        reason,
    };
    let mut qrels: HashMap<String, HashMap<String, i32>> = HashMap::new();
    for (i, line) in read("qrels/test.tsv")?.lines().enumerate() {
        let cols: Vec<&str> = line.split('\t').map(str::trim).collect();
        if line.trim().is_empty() || (i == 0 && cols.first() == Some(&"query-id")) {
            continue;
        }
        let [q, d, s] = cols[..] else {
            return Err(bad(
                "qrels/test.tsv",
                i + 1,
                "expected 3 tab-separated columns".into(),
            ));
        };
        let s: i32 = s.parse().map_err(|_| {
            bad(
                "qrels/test.tsv",
                i + 1,
                format!("score `{s}` is not an integer"),
            )
        })?;
        qrels
            .entry(q.to_string())
            .or_default()
            .insert(d.to_string(), s);
    }
    qrels.retain(|_, docs| docs.values().any(|&r| r > 0));
    let mut texts = BTreeMap::new();
    for (i, line) in read("queries.jsonl")?.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (id, _, text) = beir_doc(line).map_err(|r| bad("queries.jsonl", i + 1, r))?;
        texts.insert(id, prose(&text));
    }
    let queries = texts
        .into_iter()
        .filter(|(id, _)| qrels.contains_key(id))
        .collect();
    let name = dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string());
    Ok(Collection {
        name,
        queries,
        qrels,
    })
}

/// nDCG@10, average precision and recall@100 of one ranked list against its judgments.
pub fn query_metrics(ranked: &[String], judged: &HashMap<String, i32>) -> Metrics {
    let relevant = judged.values().filter(|&&r| r > 0).count();
    if relevant == 0 {
        return Metrics::default();
    }
    let grade = |d: &String| judged.get(d).copied().unwrap_or(0).max(0);
    let discount = |i: usize| 1.0 / ((i + 2) as f64).log2();
    let dcg: f64 = ranked
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, d)| f64::from(grade(d)) * discount(i))
        .sum();
    let mut ideal: Vec<i32> = judged.values().copied().filter(|&r| r > 0).collect();
    crate::data::sort::sort_unstable_by(&mut ideal, |a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, &r)| f64::from(r) * discount(i))
        .sum();
    let mut hits = 0usize;
    let mut precision_sum = 0.0;
    let mut hits_100 = 0usize;
    for (i, d) in ranked.iter().enumerate() {
        if grade(d) > 0 {
            hits += 1;
            precision_sum += hits as f64 / (i + 1) as f64;
            if i < 100 {
                hits_100 += 1;
            }
        }
    }
    Metrics {
        ndcg_10: if idcg > 0.0 { dcg / idcg } else { 0.0 },
        map: precision_sum / relevant as f64,
        recall_100: hits_100 as f64 / relevant as f64,
    }
}

/// A collection's query text with its quotation marks read as spaces (see the module docs).
fn prose(text: &str) -> String {
    text.replace(['"', '\u{201C}', '\u{201D}'], " ")
}

/// Mean metrics of a run (`query id → ranked doc ids`) over the collection's queries; a query
/// missing from the run scores 0.
pub fn evaluate(collection: &Collection, run: &HashMap<String, Vec<String>>) -> Metrics {
    let n = collection.queries.len();
    if n == 0 {
        return Metrics::default();
    }
    let mut sum = Metrics::default();
    for (q, _) in &collection.queries {
        let ranked = run.get(q).map_or(&[][..], Vec::as_slice);
        let m = query_metrics(ranked, &collection.qrels[q]);
        sum.ndcg_10 += m.ndcg_10;
        sum.map += m.map;
        sum.recall_100 += m.recall_100;
    }
    Metrics {
        ndcg_10: sum.ndcg_10 / n as f64,
        map: sum.map / n as f64,
        recall_100: sum.recall_100 / n as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(pairs: &[(&str, i32)]) -> HashMap<String, i32> {
        pairs.iter().map(|(d, r)| (d.to_string(), *r)).collect()
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn quotation_marks_in_collection_queries_are_not_phrases() {
        assert_eq!(
            prose(r#"on "net revenue" and “x”"#),
            "on  net revenue  and  x "
        );
    }

    #[test]
    fn perfect_ranking_scores_one() {
        let m = query_metrics(&ids(&["a", "b"]), &judged(&[("a", 1), ("b", 1)]));
        assert_eq!((m.ndcg_10, m.map, m.recall_100), (1.0, 1.0, 1.0));
    }

    #[test]
    fn average_precision_counts_unretrieved_relevant_documents() {
        // Relevant at ranks 1 and 3, a third relevant never retrieved: (1 + 2/3) / 3.
        let m = query_metrics(
            &ids(&["a", "x", "b"]),
            &judged(&[("a", 1), ("b", 1), ("c", 1)]),
        );
        assert!((m.map - (1.0 + 2.0 / 3.0) / 3.0).abs() < 1e-12);
        assert!((m.recall_100 - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn ndcg_uses_linear_gains_and_log2_discount() {
        // Grades 1 then 2 retrieved in the wrong order.
        let m = query_metrics(&ids(&["a", "b"]), &judged(&[("a", 1), ("b", 2)]));
        let dcg = 1.0 + 2.0 / 3f64.log2();
        let idcg = 2.0 + 1.0 / 3f64.log2();
        assert!((m.ndcg_10 - dcg / idcg).abs() < 1e-12);
    }

    #[test]
    fn zero_grades_are_not_relevant() {
        let m = query_metrics(&ids(&["z"]), &judged(&[("z", 0), ("a", 1)]));
        assert_eq!(m.map, 0.0);
    }

    #[test]
    fn beir_lines_parse_numeric_and_string_ids() {
        assert_eq!(
            beir_doc(r#"{"_id": 7, "title": "T", "text": "x"}"#)
                .unwrap()
                .0,
            "7"
        );
        assert!(beir_doc(r#"{"_id": ""}"#).is_err());
        assert!(beir_doc("nope").is_err());
    }
}
