//! The agent's tool surface (`wikidex::tools`) on the example wiki: definitions that match what
//! the calls accept, citation headers out of `search`, unknown ids reported as unknown, the
//! per-turn drill-down limit, the character limit, and bad arguments as coded errors.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::{json, Value};
use wikidex::tools::TOOL_NAMES;
use wikidex::{Index, IndexBuilder, ToolLimits, Tools};

fn example() -> &'static Index {
    static BUILT: OnceLock<Index> = OnceLock::new();
    BUILT.get_or_init(|| {
        let mut b = IndexBuilder::new(Default::default()).unwrap();
        b.add_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/wiki"))
            .unwrap();
        b.build().unwrap().0
    })
}

fn call(tools: &Tools, name: &str, args: Value) -> wikidex::ToolResult {
    tools
        .call(example(), name, &args.to_string())
        .unwrap_or_else(|e| panic!("{name} {args}: {e}"))
}

fn code(tools: &Tools, name: &str, args: &str) -> &'static str {
    match tools.call(example(), name, args) {
        Ok(r) => panic!("{name} {args} succeeded: {}", r.text),
        Err(e) => e.code(),
    }
}

/// A value of the schema's type, for a property the schema declares.
fn sample(name: &str, schema: &Value) -> Value {
    match schema["type"].as_str() {
        Some("string") => json!(match name {
            "scope" => "global",
            "since" | "until" => "2024-03-12",
            _ => "revenue",
        }),
        Some("integer") => json!(1),
        Some("number") => json!(0.5),
        Some("array") => json!(["revenue"]),
        other => panic!("{name}: unexpected schema type {other:?}"),
    }
}

#[test]
fn every_definition_names_exactly_the_arguments_its_call_accepts() {
    let tools = Tools::default();
    let defs = tools.definitions();
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, TOOL_NAMES);
    for d in &defs {
        let schema = &d.input_schema;
        assert_eq!(schema["type"], "object", "{}", d.name);
        assert_eq!(schema["additionalProperties"], false, "{}", d.name);
        let props = schema["properties"].as_object().expect("properties");
        for r in schema["required"].as_array().expect("required") {
            assert!(props.contains_key(r.as_str().unwrap()), "{}: {r}", d.name);
        }
        // Every declared property is accepted...
        let all: serde_json::Map<String, Value> = props
            .iter()
            .map(|(k, v)| (k.clone(), sample(k, v)))
            .collect();
        let args = Value::Object(all.clone());
        tools
            .call(example(), &d.name, &args.to_string())
            .unwrap_or_else(|e| panic!("{} with every property {args}: {e}", d.name));
        // ...and one it does not declare is refused.
        let mut extra = all;
        extra.insert("bogus".into(), json!(1));
        assert_eq!(
            code(&tools, &d.name, &Value::Object(extra).to_string()),
            "invalid_argument",
            "{}",
            d.name
        );
        tools.reset_turn();
    }
}

#[test]
fn search_gives_citation_headers_the_always_pages_and_the_offered_ids() {
    let tools = Tools::default();
    let r = call(
        &tools,
        "search",
        json!({"query": "why did the nightly job crash", "limit": 3}),
    );
    let headers = wikidex::cite::parse_headers(&r.text);
    assert!(headers.len() >= 3, "{}", r.text);
    let hits = r.data["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 3, "the always pages take no slot of the limit");
    assert!(!r.data["always"].as_array().unwrap().is_empty());
    let offered: Vec<&str> = r.data["offered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for h in &headers {
        assert!(
            offered.contains(&h.chunk.as_str()),
            "{} not offered",
            h.chunk
        );
        assert!(example().chunk(&h.chunk).is_ok());
    }
    // The limit is capped at the session's.
    let small = Tools::new(ToolLimits {
        max_results: 2,
        ..ToolLimits::default()
    })
    .unwrap();
    let r = call(&small, "search", json!({"query": "revenue", "limit": 50}));
    assert_eq!(r.data["hits"].as_array().unwrap().len(), 2);
}

#[test]
fn a_query_with_no_words_says_so_instead_of_an_empty_answer() {
    let r = call(&Tools::default(), "search", json!({"query": "the of and"}));
    assert!(r.data["hits"].as_array().unwrap().is_empty());
    assert!(r.text.starts_with("No page matches"), "{}", r.text);
    assert!(r.text.contains("no searchable words"), "{}", r.text);
}

#[test]
fn a_fabricated_chunk_id_comes_back_marked_unknown() {
    let tools = Tools::default();
    let real = "raw/slack_2024_03_12::chunk_0";
    let fake = "revenue::chunk_99";
    let r = call(&tools, "read_chunks", json!({"ids": [real, fake]}));
    assert_eq!(r.data["unknown"], json!([fake]));
    assert_eq!(r.data["chunks"][0]["id"], real);
    assert!(
        r.text.contains(&format!("[chunk {fake}] unknown")),
        "{}",
        r.text
    );
    assert!(r.text.contains("OOM"), "{}", r.text);

    let r = call(
        &tools,
        "read_pages",
        json!({"keys": ["revenue", "no_such_page"]}),
    );
    assert_eq!(r.data["unknown"], json!(["no_such_page"]));
    assert_eq!(r.data["pages"][0]["id"], "revenue");
    assert!(r.text.contains("[page no_such_page] unknown"), "{}", r.text);
}

#[test]
fn neighbors_carry_the_evidence_and_verify_gives_verdicts() {
    let tools = Tools::default();
    let r = call(
        &tools,
        "neighbors",
        json!({"keys": ["incident_2024_03_memory_leak"], "depth": 1}),
    );
    assert!(r.text.contains("--["), "{}", r.text);
    assert!(!r.data["edges"].as_array().unwrap().is_empty());

    let quote = "The segment_enricher pod was OOM-killed three times, and nightly_build failed at 03:31 UTC.";
    let r = call(
        &tools,
        "verify",
        json!({"answer": quote, "cited": ["raw/slack_2024_03_12::chunk_0", "made_up::chunk_0"]}),
    );
    assert_eq!(r.data["verification"]["passed"], false);
    assert!(r.text.contains("- made_up::chunk_0: unknown"), "{}", r.text);
    assert!(
        r.text.contains("- raw/slack_2024_03_12::chunk_0: quote"),
        "{}",
        r.text
    );
}

#[test]
fn drill_down_calls_stop_at_the_turns_limit_until_reset() {
    let tools = Tools::new(ToolLimits {
        max_drilldowns: 2,
        ..ToolLimits::default()
    })
    .unwrap();
    call(&tools, "read_pages", json!({"keys": ["revenue"]}));
    call(&tools, "neighbors", json!({"keys": ["revenue"]}));
    assert_eq!(
        code(&tools, "read_chunks", r#"{"ids": ["revenue::chunk_0"]}"#),
        "too_large"
    );
    // Searching and verifying are not drill-downs.
    call(&tools, "search", json!({"query": "revenue"}));
    assert_eq!(tools.drilldowns(), 2);
    tools.reset_turn();
    call(&tools, "read_chunks", json!({"ids": ["revenue::chunk_0"]}));
    assert_eq!(tools.drilldowns(), 1);
}

#[test]
fn a_long_result_is_cut_to_the_character_limit_and_says_so() {
    let tools = Tools::new(ToolLimits {
        max_chars: 200,
        ..ToolLimits::default()
    })
    .unwrap();
    let r = call(
        &tools,
        "read_pages",
        json!({"keys": ["incident_2024_03_memory_leak"]}),
    );
    assert!(r.text.chars().count() <= 200, "{}", r.text.chars().count());
    assert!(r.text.ends_with("more characters cut]"), "{}", r.text);
    // The structured result is whole.
    assert!(r.data["pages"][0]["body"].as_str().unwrap().chars().count() > 200);
}

#[test]
fn bad_arguments_are_invalid_argument_errors() {
    let tools = Tools::default();
    for (name, args) in [
        ("no_such_tool", "{}"),
        ("search", "{"),
        ("search", "{}"),
        ("search", r#"{"query": 3}"#),
        ("search", r#"{"query": "x", "limit": 0}"#),
        ("search", r#"{"query": "x", "limit": -1}"#),
        ("search", r#"{"query": "x", "scope": ""}"#),
        ("read_pages", r#"{"keys": []}"#),
        ("read_chunks", r#"{"ids": "revenue::chunk_0"}"#),
        ("neighbors", r#"{"keys": ["revenue"], "depth": 7}"#),
        ("verify", r#"{"cited": []}"#),
        ("verify", "[]"),
    ] {
        assert_eq!(
            code(&tools, name, args),
            "invalid_argument",
            "{name} {args}"
        );
    }
    let many: Vec<String> = (0..51).map(|i| format!("p{i}")).collect();
    assert_eq!(
        code(&tools, "read_pages", &json!({ "keys": many }).to_string()),
        "too_large"
    );
    assert_eq!(tools.drilldowns(), 0, "a refused call costs no drill-down");
    assert!(Tools::new(ToolLimits {
        max_results: 0,
        ..ToolLimits::default()
    })
    .is_err());
}

#[test]
fn the_instructions_list_the_always_pages() {
    let tools = Tools::default();
    let text = tools.instructions(example());
    let always: Vec<_> = example()
        .pages()
        .iter()
        .filter(|p| p.usage_mode == wikidex::UsageMode::Always)
        .collect();
    assert!(!always.is_empty());
    for p in always {
        assert!(text.contains(&p.title), "{text}");
    }
}
