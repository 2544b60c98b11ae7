//! `wikidex mcp` as a process on pipes: shutdown at the end of input, backpressure on pipelined
//! requests, over-long lines, and its arguments. Each test writes raw JSON-RPC lines, as a
//! careless or hostile client would; `make test-mcp` covers the official client.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn wiki() -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/wiki");
    dir.to_str().expect("utf-8 path").to_string()
}

/// `wikidex mcp examples/wiki --no-embed --watch 0 EXTRA...` on pipes.
fn server(extra: &[&str]) -> Child {
    let wiki = wiki();
    let mut args = vec!["mcp", wiki.as_str(), "--no-embed", "--watch", "0"];
    args.extend_from_slice(extra);
    Command::new(env!("CARGO_BIN_EXE_wikidex"))
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wikidex mcp")
}

fn initialize() -> String {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "cli-tests", "version": "1" }
        }
    })
    .to_string()
}

fn initialized() -> String {
    json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string()
}

fn call(id: u64, tool: &str, args: Value) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": tool, "arguments": args }
    })
    .to_string()
}

fn search(id: u64) -> String {
    call(
        id,
        "search",
        json!({ "query": "who do I page for an outage" }),
    )
}

/// The JSON lines of standard output, by id (`null` for an answer without one).
fn answers(stdout: &[u8]) -> BTreeMap<String, Vec<Value>> {
    let mut by_id: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for line in stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_slice(line).unwrap_or_else(|e| {
            panic!(
                "stdout line is not JSON ({e}): {}",
                String::from_utf8_lossy(line)
            )
        });
        let id = v.get("id").map_or("absent".to_string(), Value::to_string);
        by_id.entry(id).or_default().push(v);
    }
    by_id
}

/// Waits for the process, reading what it writes, and kills it (failing the test) if it has
/// not ended within a minute: a server that waits forever must fail the test, not hang it.
fn finish(mut child: Child) -> Output {
    fn drain(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<Vec<u8>> {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                pipe.read_to_end(&mut bytes)
                    .expect("read the server's output");
            }
            bytes
        })
    }
    let (stdout, stderr) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "wikidex mcp did not end within a minute; stderr:\n{}",
                String::from_utf8_lossy(&stderr.join().expect("stderr"))
            );
        }
        thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
    }
}

fn assert_clean_exit(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "wikidex mcp exited with {:?}; stderr:\n{stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "stderr:\n{stderr}");
}

fn write_lines(stdin: &mut ChildStdin, lines: &[String]) {
    let mut all = lines.join("\n");
    all.push('\n');
    stdin.write_all(all.as_bytes()).expect("write requests");
}

/// Writes `lines` on a thread (the server may stop reading; the writes then wait), then
/// closes standard input; returns the output once the process ends.
fn run(lines: Vec<String>) -> Output {
    let mut child = server(&[]);
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = thread::spawn(move || write_lines(&mut stdin, &lines));
    let out = finish(child);
    writer.join().expect("writer");
    out
}

// ---- Item 4: a clean end ----

#[test]
fn every_request_written_before_the_input_closes_is_answered_then_the_server_exits_0() {
    let n = 40;
    let mut lines = vec![initialize(), initialized()];
    for id in 1..=n {
        lines.push(match id % 4 {
            0 => call(id, "read_pages", json!({ "keys": ["runbook_oncall"] })),
            1 => call(id, "neighbors", json!({ "keys": ["runbook_oncall"] })),
            _ => search(id),
        });
    }
    let out = run(lines);
    assert_clean_exit(&out);
    let by_id = answers(&out.stdout);
    for id in 0..=n {
        let got = by_id.get(&id.to_string()).map_or(0, Vec::len);
        assert_eq!(got, 1, "answers to request {id}: {got}");
        assert!(by_id[&id.to_string()][0].get("result").is_some());
    }
    assert_eq!(by_id.len() as u64, n + 1, "{:?}", by_id.keys());
}

#[test]
fn input_closed_at_once_or_before_initializing_is_a_clean_end() {
    let out = run(Vec::new());
    assert_clean_exit(&out);
    assert!(out.stdout.is_empty());

    let out = run(vec![initialize()]);
    assert_clean_exit(&out);
    assert_eq!(answers(&out.stdout)["0"].len(), 1);
}

// ---- Item 5: bounded requests in flight ----

/// Resident memory (MB) and threads of a running process, from /proc/PID/status; `None` once
/// it has ended.
fn rss_and_threads(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
    };
    Some((field("VmRSS:")? / 1024, field("Threads:")?))
}

#[test]
fn pipelined_requests_are_read_only_as_fast_as_they_are_answered() {
    if !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("no /proc: skipped");
        return;
    }
    let n: u64 = 5_000;
    let mut child = server(&[]);
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin");
    // All the requests at once, standard input left open; with backpressure the writes wait.
    let writer = thread::spawn(move || {
        let mut lines = vec![initialize(), initialized()];
        lines.extend((1..=n).map(search));
        let mut all = lines.join("\n");
        all.push('\n');
        // An old server that dies mid-way breaks the pipe: the assertions below say why.
        let _ = stdin.write_all(all.as_bytes());
        stdin
    });
    // Nobody reads the answers for a while: what does the server hold meanwhile?
    let (mut rss, mut threads) = (0, 0);
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(1500) {
        let Some((r, t)) = rss_and_threads(pid) else {
            break;
        };
        (rss, threads) = (rss.max(r), threads.max(t));
        thread::sleep(Duration::from_millis(20));
    }
    // Now read everything, then close the input.
    let stdout = child.stdout.take().expect("stdout");
    let reader = thread::spawn(move || {
        let mut ids = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let v: Value = serde_json::from_str(&line.expect("read")).expect("JSON line");
            ids.push(v["id"].as_u64().expect("numeric id"));
        }
        ids
    });
    let stdin = writer.join().expect("writer");
    drop(stdin);
    let out = finish(child);
    let mut ids = reader.join().expect("reader");
    // 16 requests in flight: well under 100 MB and 32 threads (without the bound, 5,000
    // requests held about 250 MB and 500 threads after a second).
    assert!(
        rss < 100,
        "the server held {rss} MB with the client not reading"
    );
    assert!(
        threads < 32,
        "the server ran {threads} threads with the client not reading"
    );
    assert_clean_exit(&out);
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len() as u64, n + 1, "answers to distinct requests");
}

/// A client that cancels requests must not use up the places in flight: their answers are
/// dropped, the rest still flows, and the end is still clean.
#[test]
fn cancelled_and_reused_ids_do_not_stall_the_server() {
    let mut lines = vec![initialize(), initialized()];
    for id in 1..=40 {
        lines.push(search(id));
        lines.push(
            json!({
                "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": { "requestId": id, "reason": "test" }
            })
            .to_string(),
        );
    }
    // Two requests with one id: each gets an answer (the second an error while the first is
    // in flight).
    lines.push(search(500));
    lines.push(search(500));
    lines.extend((41..=80).map(search));
    let out = run(lines);
    assert_clean_exit(&out);
    let by_id = answers(&out.stdout);
    for id in 41..=80 {
        assert_eq!(by_id.get(&id.to_string()).map_or(0, Vec::len), 1, "id {id}");
    }
    assert_eq!(by_id["500"].len(), 2);
    for id in 1..=40 {
        assert!(by_id.get(&id.to_string()).map_or(0, Vec::len) <= 1);
    }
}

// ---- Item 5: over-long lines ----

/// The error answer to the line that had `id`.
fn refusal<'a>(by_id: &'a BTreeMap<String, Vec<Value>>, id: &str) -> &'a Value {
    let answers = by_id
        .get(id)
        .unwrap_or_else(|| panic!("no answer for id {id}; ids: {:?}", by_id.keys()));
    assert_eq!(answers.len(), 1, "{answers:?}");
    let error = &answers[0]["error"];
    assert_eq!(error["code"], -32600, "{:?}", answers[0]);
    error
}

#[test]
fn a_line_over_the_cap_is_answered_with_an_error_for_its_id() {
    // Over rmcp's own cap (16 MiB) too, which dropped the line without a word.
    let huge = "a".repeat(17 << 20);
    let big = "b".repeat(5 << 20);
    let lines = vec![
        initialize(),
        initialized(),
        call(1, "search", json!({ "query": huge })),
        // The id last (as some clients write it), after a string that quotes an id.
        format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"search","arguments":{{"query":"\"id\": 5, {big}"}}}},"id":"late"}}"#
        ),
        // No id to read: not an object.
        format!("[{}1]", "1,".repeat(3 << 20)),
        // A notification over the cap: never answered.
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"{big}"}}}}"#
        ),
        search(2),
    ];
    let out = run(lines);
    assert_clean_exit(&out);
    let by_id = answers(&out.stdout);
    let error = refusal(&by_id, "1");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("longer than"),
        "{error}"
    );
    refusal(&by_id, "\"late\"");
    refusal(&by_id, "null");
    assert!(by_id["2"][0].get("result").is_some());
    assert_eq!(
        by_id.keys().collect::<Vec<_>>(),
        ["\"late\"", "0", "1", "2", "null"],
        "nothing else is answered"
    );
}

// ---- Item 13: --watch ----

#[test]
fn a_watch_period_past_a_day_is_an_invalid_argument_not_a_panic() {
    for watch in ["1e20", "86401", "inf"] {
        let out = Command::new(env!("CARGO_BIN_EXE_wikidex"))
            .args(["mcp", &wiki(), "--no-embed", "--watch", watch])
            .stdin(Stdio::null())
            .output()
            .expect("run wikidex");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "--watch {watch}: {stderr}");
        assert!(
            stderr.contains("error[invalid_argument]") && stderr.contains("--watch"),
            "--watch {watch}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // A day is accepted (the input is closed at once: a clean end).
    let out = Command::new(env!("CARGO_BIN_EXE_wikidex"))
        .args(["mcp", &wiki(), "--no-embed", "--watch", "86400"])
        .stdin(Stdio::null())
        .output()
        .expect("run wikidex");
    assert_clean_exit(&out);
}
