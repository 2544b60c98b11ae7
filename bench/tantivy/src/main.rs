//! wikidex's lexical lane and tantivy side by side, in one process, on one corpus.
//!
//! ```text
//! cargo run --release --manifest-path bench/tantivy/Cargo.toml -- CORPUS_DIR BLOB DATA [ROUNDS]
//! ```
//!
//! `CORPUS_DIR/corpus.jsonl` is a BEIR corpus (`make_corpus.py` writes one), `BLOB` the index
//! `wikidex build --beir CORPUS_DIR --no-embed` made of it, `DATA` the folder with `cacm/` and
//! `cranfield/` whose queries are asked. The tantivy index is built once into
//! `BLOB` with the extension `.tantivy` (one text field, title and text, analyzed as English with stop words
//! and the Snowball stemmer, as wikidex analyzes English) and reused. The queries are CACM's
//! and Cranfield's, whole, then cut to their first three words that are not stop words. Each
//! round asks every query once of each engine for its 10 best, one engine after the other;
//! the best round of each is kept. Both run on one thread. It prints one row of a Markdown
//! table per query set: chunks, queries, the time per query of wikidex's lexical lane and of
//! tantivy, their ratio, wikidex's default lanes (lexical and token: the blob has no vectors)
//! and its lexical search with hits (snippets), and how many of tantivy's top 10 wikidex's
//! lexical top 10 holds too (a synthetic corpus repeats each document's words in many pages
//! that then tie, so this is low there). Then an upsert of one page in each (see
//! [`upserts`]).

use std::path::Path;
use std::time::Instant;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, STORED, STRING,
};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer,
};
use tantivy::{doc, Index as Tantivy, IndexWriter, TantivyDocument, Term};
use wikidex::{Index, Lane, SearchOptions, WriteOptions};

const ANALYZER: &str = "en";

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(StopWordFilter::new(Language::English).expect("English stop words"))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Words without stop words, unstemmed (for the short queries).
fn plain() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(LowerCaser)
        .filter(StopWordFilter::new(Language::English).expect("English stop words"))
        .build()
}

fn schema() -> Schema {
    let mut schema = Schema::builder();
    schema.add_text_field("id", STRING | STORED);
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(ANALYZER)
        .set_index_option(IndexRecordOption::WithFreqs);
    schema.add_text_field(
        "text",
        TextOptions::default().set_indexing_options(indexing),
    );
    schema.build()
}

/// Opens the tantivy index of `corpus` in `dir`, building it first if it is not there.
fn tantivy(corpus: &Path, dir: &Path) -> tantivy::Result<Tantivy> {
    if dir.join("meta.json").exists() {
        let index = Tantivy::open_in_dir(dir)?;
        index.tokenizers().register(ANALYZER, analyzer());
        return Ok(index);
    }
    std::fs::create_dir_all(dir)?;
    let schema = schema();
    let index = Tantivy::create_in_dir(dir, schema.clone())?;
    index.tokenizers().register(ANALYZER, analyzer());
    let (id, text) = (schema.get_field("id")?, schema.get_field("text")?);
    let started = Instant::now();
    let mut writer: IndexWriter = index.writer(1_000_000_000)?;
    for line in std::fs::read_to_string(corpus)?.lines() {
        let d: serde_json::Value = serde_json::from_str(line).expect("a BEIR corpus line");
        let field = |k: &str| d[k].as_str().unwrap_or("").to_string();
        let body = format!("{}\n{}", field("title"), field("text"));
        writer.add_document(doc!(id => field("_id"), text => body))?;
    }
    writer.commit()?;
    // One segment, as a read-only index is best searched.
    let segments = index.searchable_segment_ids()?;
    if segments.len() > 1 {
        writer.merge(&segments).wait()?;
    }
    writer.wait_merging_threads()?;
    eprintln!("tantivy build: {:.1} s", started.elapsed().as_secs_f64());
    Ok(index)
}

fn queries(data: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for c in ["cacm", "cranfield"] {
        let text = std::fs::read_to_string(data.join(c).join("queries.jsonl")).expect("queries");
        for line in text.lines() {
            let q: serde_json::Value = serde_json::from_str(line).expect("a BEIR query line");
            out.push(q["text"].as_str().expect("query text").to_string());
        }
    }
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: wikidex-bench-tantivy CORPUS_DIR BLOB DATA [ROUNDS]");
        std::process::exit(2);
    }
    let (corpus, blob, data) = (
        Path::new(&args[1]),
        Path::new(&args[2]),
        Path::new(&args[3]),
    );
    let rounds: usize = args.get(4).map_or(Ok(5), |r| r.parse())?;

    let started = Instant::now();
    let ours = Index::open(blob)?;
    let our_load = started.elapsed().as_secs_f64();
    let theirs = tantivy(
        &corpus.join("corpus.jsonl"),
        &blob.with_extension("tantivy"),
    )?;
    let started = Instant::now();
    let reader = theirs.reader()?;
    let searcher = reader.searcher();
    let their_load = started.elapsed().as_secs_f64();
    let text = theirs.schema().get_field("text")?;
    let id = theirs.schema().get_field("id")?;
    let mut analyzer = analyzer();
    let queries = queries(data);
    let opts = SearchOptions {
        limit: Some(10),
        lanes: Some(vec![Lane::Lexical]),
        ..Default::default()
    };
    eprintln!(
        "{} chunks; {} queries; load: wikidex {:.2} s, tantivy {:.3} s (its files mapped, {} segment(s))",
        ours.chunk_count(),
        queries.len(),
        our_load,
        their_load,
        searcher.segment_readers().len()
    );

    let ask_tantivy = |analyzer: &mut TextAnalyzer, q: &str| -> tantivy::Result<Vec<_>> {
        let mut stream = analyzer.token_stream(q);
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        while let Some(token) = stream.next() {
            let term = Term::from_field_text(text, &token.text);
            clauses.push((
                Occur::Should,
                Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)),
            ));
        }
        searcher.search(
            &BooleanQuery::new(clauses),
            &TopDocs::with_limit(10).order_by_score(),
        )
    };
    // Short queries, as a person types them: each query's first three words that are not stop
    // words.
    let mut plain = plain();
    let short: Vec<String> = queries
        .iter()
        .map(|q| {
            let mut words = Vec::new();
            let mut stream = plain.token_stream(q);
            while let Some(token) = stream.next() {
                if words.len() < 3 {
                    words.push(token.text.clone());
                }
            }
            words.join(" ")
        })
        .collect();
    let default_lanes = SearchOptions {
        limit: Some(10),
        ..Default::default()
    };

    for (name, queries) in [("full queries", &queries), ("three words each", &short)] {
        // The two engines' top 10 for each query, to show they answer the same question.
        let (mut overlap, mut total) = (0usize, 0usize);
        for q in queries {
            let mine: Vec<String> = ours
                .rank(q, &opts)?
                .iter()
                .map(|r| ours.pages()[r.page].key.clone())
                .collect();
            for (_, at) in ask_tantivy(&mut analyzer, q)? {
                let d: TantivyDocument = searcher.doc(at)?;
                let key = d.get_first(id).and_then(|v| v.as_str()).unwrap_or("");
                overlap += usize::from(mine.iter().any(|m| m == key));
            }
            total += mine.len();
        }
        // Each round: wikidex's lexical lane, tantivy, wikidex's default lanes (lexical and
        // token, no model in this blob), wikidex's search with its hits (snippets).
        let mut best = [f64::MAX; 4];
        let mut sink = 0usize;
        for _ in 0..rounds {
            for (i, slot) in best.iter_mut().enumerate() {
                let started = Instant::now();
                for q in queries {
                    sink += match i {
                        0 => ours.rank(q, &opts)?.len(),
                        1 => ask_tantivy(&mut analyzer, q)?.len(),
                        2 => ours.rank(q, &default_lanes)?.len(),
                        _ => ours.search(q, &opts)?.hits.len(),
                    };
                }
                *slot = slot.min(started.elapsed().as_secs_f64());
            }
        }
        let per = |t: f64| t * 1e6 / queries.len() as f64;
        // A row of the table `bench/growth.sh` prints.
        println!(
            "| {} | {name} | {:.0} µs | {:.0} µs | **{:.2}x** | {:.0} µs | {:.0} µs | {:.0}% |",
            ours.chunk_count(),
            per(best[0]),
            per(best[1]),
            best[1] / best[0],
            per(best[2]),
            per(best[3]),
            100.0 * overlap as f64 / total.max(1) as f64
        );
        std::hint::black_box(sink);
    }
    drop(searcher);
    upserts(&ours, &blob.with_extension("tantivy"), rounds)
}

/// One page replaced by its text with a line more (another page each round): wikidex makes
/// the next snapshot ([`Index::upsert_page`]: the page cut and analyzed, the rest taken from
/// the index) and frees one (as a session frees the snapshot a write replaced), tantivy deletes the document by its id, adds it again, commits and reloads its
/// reader so that a search sees it. tantivy writes into a copy of its index, so that the
/// index the queries read stays one segment. The best round of each is kept; prints one row,
/// starting `| upsert |`, which `bench/growth.sh` puts in a table of its own.
fn upserts(ours: &Index, theirs: &Path, rounds: usize) -> Result<(), Box<dyn std::error::Error>> {
    let copy = std::env::temp_dir().join(format!("wikidex-bench-tantivy-{}", std::process::id()));
    std::fs::create_dir_all(&copy)?;
    for entry in std::fs::read_dir(theirs)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), copy.join(entry.file_name()))?;
        }
    }
    let index = Tantivy::open_in_dir(&copy)?;
    index.tokenizers().register(ANALYZER, analyzer());
    let (id, text) = (
        index.schema().get_field("id")?,
        index.schema().get_field("text")?,
    );
    let reader = index.reader()?;
    let mut writer: IndexWriter = index.writer(50_000_000)?;
    let opts = WriteOptions {
        allow_dangling: true,
    };
    let (mut mine, mut their) = (f64::MAX, f64::MAX);
    for round in 0..rounds {
        let page = &ours.pages()[(round * 7919) % ours.pages().len()];
        let edited = format!("{}\n\nOne line more, round {round}.\n", page.text);
        // Freeing a snapshot is part of a write (a session frees the one it replaced).
        let started = Instant::now();
        drop(ours.upsert_page(&page.path, &edited, &opts, None)?);
        mine = mine.min(started.elapsed().as_secs_f64());
        let started = Instant::now();
        writer.delete_term(Term::from_field_text(id, &page.key));
        writer.add_document(doc!(id => page.key.clone(), text => edited))?;
        writer.commit()?;
        reader.reload()?;
        their = their.min(started.elapsed().as_secs_f64());
    }
    drop(writer);
    std::fs::remove_dir_all(&copy)?;
    println!(
        "| upsert | {} | {:.1} ms | {:.1} ms | {:.0}x |",
        ours.chunk_count(),
        mine * 1e3,
        their * 1e3,
        mine / their
    );
    Ok(())
}
