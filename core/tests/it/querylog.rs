//! The query log: what a session logs when given a log (and nothing otherwise), the JSON Lines
//! writer, and the insights read back from a scripted session.

use std::sync::{Arc, Mutex};

use wikidex::cite::Cited;
use wikidex::querylog::{self, JsonlLog, LogKind};
use wikidex::{Index, IndexBuilder, LogEntry, QueryLog, SearchOptions, Session, WriteOptions};

#[derive(Default)]
struct Collect(Mutex<Vec<LogEntry>>);

impl QueryLog for Collect {
    fn record(&self, entry: &LogEntry) {
        self.0.lock().unwrap().push(entry.clone());
    }
}

fn index() -> Index {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.add_file(
        "global/oncall.md",
        b"---\ntitle: On-call\ntags: [ops]\n---\nPage the on-call engineer for any outage of the nightly pipeline.",
    )
    .unwrap();
    b.add_file(
        "global/rules.md",
        b"---\ntitle: Rules\nusage_mode: always\n---\nNever export PII.",
    )
    .unwrap();
    b.add_file("global/revenue.md", b"Revenue is recognized monthly.")
        .unwrap();
    b.build().unwrap().0
}

#[test]
fn a_session_logs_searches_and_verdicts_only_when_given_a_log() {
    let index = Session::new(index());
    let log = Arc::new(Collect::default());
    index.search("outage", &SearchOptions::default()).unwrap();
    assert!(log.0.lock().unwrap().is_empty());

    index.set_query_log(Some(log.clone() as Arc<dyn QueryLog>), "python");
    let opts = SearchOptions {
        tags: vec!["ops".into()],
        limit: Some(5),
        ..SearchOptions::default()
    };
    index.search("who handles an outage", &opts).unwrap();
    index.search("xqzvbnm", &SearchOptions::default()).unwrap();
    let v = index
        .check_answer(
            "Page the on-call engineer for any outage of the nightly pipeline.",
            &[Cited::id("oncall::chunk_0"), Cited::id("nope::chunk_0")],
            &[],
        )
        .unwrap();
    assert!(!v.verification.passed);
    // A write keeps the log on the new snapshot.
    index
        .upsert_page("global/new.md", "New page.", &WriteOptions::default())
        .unwrap();
    index.search("new", &SearchOptions::default()).unwrap();
    // The index itself logs nothing: only the session's reads are logged.
    index
        .index()
        .search("outage", &SearchOptions::default())
        .unwrap();

    let entries = log.0.lock().unwrap().clone();
    assert_eq!(entries.len(), 4, "{entries:#?}");
    let first = &entries[0];
    assert_eq!(
        (first.origin.as_str(), first.kind),
        ("python", LogKind::Search)
    );
    assert_eq!(first.query.as_deref(), Some("who handles an outage"));
    assert_eq!(first.filters["tags"][0], "ops");
    assert_eq!(first.filters["limit"], 5);
    assert_eq!(first.results, 1, "the always page is not counted");
    assert_eq!(first.top, ["oncall::chunk_0"]);
    assert_eq!(first.lanes["lexical"], "ok");
    assert!(first.ms.is_some() && first.time_ms.is_some());
    assert_eq!(entries[1].results, 0);
    assert_eq!(entries[2].kind, LogKind::Verify);
    let statuses: Vec<(&str, &str)> = entries[2]
        .verdicts
        .iter()
        .map(|v| (v.id.as_str(), v.status.name()))
        .collect();
    assert_eq!(
        statuses,
        [("oncall::chunk_0", "quote"), ("nope::chunk_0", "unknown")]
    );
    assert_eq!(entries[3].query.as_deref(), Some("new"));

    index.set_query_log(None, "python");
    index.search("outage", &SearchOptions::default()).unwrap();
    assert_eq!(log.0.lock().unwrap().len(), 4);
}

#[test]
fn a_session_logs_the_searches_and_verdicts_of_its_tools_and_evidence_queries() {
    let session = Session::new(index());
    let log = Arc::new(Collect::default());
    session
        .call_tool("search", r#"{"query": "outage"}"#)
        .unwrap();
    assert!(log.0.lock().unwrap().is_empty());

    session.set_query_log(Some(log.clone() as Arc<dyn QueryLog>), "mcp");
    session
        .call_tool("search", r#"{"query": "who handles an outage"}"#)
        .unwrap();
    session
        .call_tool(
            "verify",
            r#"{"answer": "Revenue is recognized monthly.", "cited": ["revenue::chunk_0"]}"#,
        )
        .unwrap();
    // Tools that neither search nor verify log nothing.
    session
        .call_tool("read_pages", r#"{"keys": ["revenue"]}"#)
        .unwrap();
    session
        .query_with_evidence("outage", &Default::default())
        .unwrap();
    session
        .verify("Revenue is recognized monthly.", &[], &[])
        .unwrap();

    let entries = log.0.lock().unwrap().clone();
    let got: Vec<(&str, LogKind, Option<&str>)> = entries
        .iter()
        .map(|e| (e.origin.as_str(), e.kind, e.query.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("mcp", LogKind::Search, Some("who handles an outage")),
            ("mcp", LogKind::Verify, None),
            ("mcp", LogKind::Search, Some("outage")),
            ("mcp", LogKind::Verify, None),
        ]
    );
    assert_eq!(entries[0].top, ["oncall::chunk_0"]);
    assert_eq!(entries[1].verdicts[0].id, "revenue::chunk_0");
    assert_eq!(entries[1].verdicts[0].status.name(), "quote");
}

#[test]
fn a_jsonl_log_round_trips_and_insights_find_the_content_gaps() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("wikidex-querylog");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("queries.jsonl");
    let _ = std::fs::remove_file(&path);
    let index = Session::new(index());
    let log = Arc::new(JsonlLog::open(&path).unwrap());
    index.set_query_log(Some(log.clone() as Arc<dyn QueryLog>), "cli");
    for q in [
        "outage",
        "xqzvbnm plorkish",
        "Xqzvbnm   PLORKISH",
        "the of and",
        "outage",
    ] {
        index.search(q, &SearchOptions::default()).unwrap();
    }
    index
        .verify(
            "Revenue is recognized monthly.",
            &[
                Cited::id("revenue::chunk_0"),
                Cited {
                    id: "oncall::chunk_0".into(),
                    hash: Some("0".repeat(32)),
                },
                Cited::id("made_up::chunk_1"),
            ],
            &["rules::chunk_0".into()],
        )
        .unwrap();
    log.close().unwrap();
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("not a log line\n");
    let (entries, bad) = querylog::read_log(&text);
    assert_eq!((entries.len(), bad), (6, 1));

    let pages: Vec<String> = index.index().pages().iter().map(|p| p.id()).collect();
    let r = querylog::insights(&entries, bad, Some(&pages), 10);
    assert_eq!((r.searches, r.verifies, r.bad_lines), (5, 1, 1));
    let gaps: Vec<(&str, usize)> = r
        .zero_result
        .iter()
        .map(|c| (c.key.as_str(), c.count))
        .collect();
    assert_eq!(gaps, [("xqzvbnm plorkish", 2), ("the of and", 1)]);
    assert_eq!(r.frequent[0].count, 2);
    // Three citations (the offered, uncited id is not one): one drifted, one unknown.
    assert_eq!(r.citations, 3);
    assert!((r.drifted_share - 1.0 / 3.0).abs() < 1e-9);
    assert!((r.unknown_share - 1.0 / 3.0).abs() < 1e-9);
    let cited: Vec<&str> = r.cited_pages.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(cited, ["oncall", "revenue"]);
    assert_eq!(r.never_cited, Some(vec!["rules".to_string()]));
    std::fs::remove_dir_all(&dir).unwrap();
}
