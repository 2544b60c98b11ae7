//! The MCP transport on standard input and output ([`Stdio`]): one JSON-RPC message per line,
//! at most [`MAX_IN_FLIGHT`] requests in flight, every line answered or ignored on purpose, a
//! clean end (see the [server](super)).

use std::collections::HashMap;
use std::future::Future;
use std::io::{self, BufRead, Write};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ErrorCode, JsonRpcMessage, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Value};

/// Most requests read from standard input and not answered yet. At this many the server stops
/// reading until an answer is written, so a client that pipelines requests (reading the
/// answers or not) keeps at most this many parsed requests, running tool calls (each on its
/// own blocking thread) and unwritten answers in the server: its memory and thread count stay
/// flat. Sixteen: more calls at once than an agent makes, few enough threads and answers to
/// hold on any machine.
pub(crate) const MAX_IN_FLIGHT: usize = 16;

/// Longest line, one JSON-RPC message, read from standard input (newline excluded): the
/// arguments `wikidex tool NAME -` reads at most (rmcp's own transport took 16 MiB and dropped
/// a longer line without a word). A longer line is not kept: it is answered with an `Invalid
/// Request` error carrying its `id` (found by scanning the line as it streams by), or `id:
/// null` when none can be read; a whole object without an `id` is a notification and is not
/// answered.
pub(crate) const MAX_LINE_BYTES: usize = 4 << 20;

/// The MCP transport on standard input and output, one JSON-RPC message per line.
///
/// A reader thread reads standard input, parses each line and hands the messages to rmcp; a
/// writer thread writes rmcp's messages to standard output. Both count the answers owed
/// ([`Owed`]): a request is owed from the moment it is read until its answer is written, and
/// the reader waits while [`MAX_IN_FLIGHT`] are. At the end of input the reader waits until
/// nothing is owed before rmcp hears of the end, so every request sent before is answered
/// and the server exits with nothing in flight.
///
/// The reader answers some lines itself: one over [`MAX_LINE_BYTES`], well-formed JSON that
/// is not a message (`Invalid Request`, with the line's `id` when it has one), and a request
/// reusing the id of one not yet answered. Lines that are not JSON at all are ignored, as rmcp
/// ignores them (there is no id to answer, and answering garbage can start an error storm
/// with a peer that echoes). A `notifications/cancelled` is handled here, not by rmcp: the
/// answer to the cancelled request, when its call ends, is not written (rmcp would drop it
/// before it reached the transport, and its place among the requests in flight would never
/// be freed).
pub(crate) struct Stdio {
    incoming: tokio::sync::mpsc::Receiver<ClientJsonRpcMessage>,
    out: Option<mpsc::Sender<Outgoing>>,
    owed: Arc<Owed>,
}

/// One line for the writer thread.
struct Outgoing {
    line: Vec<u8>,
    settles: Settles,
    /// Told once the line is written (and flushed), or could not be.
    done: Option<tokio::sync::oneshot::Sender<io::Result<()>>>,
}

/// What writing a line pays off.
enum Settles {
    Nothing,
    /// The answer to this request.
    Request(RequestId),
    /// The reader's own answer to a line it refused.
    Refusal,
}

/// The answers the server owes the client.
#[derive(Default)]
struct Owed {
    state: Mutex<OwedState>,
    changed: Condvar,
}

#[derive(Default)]
struct OwedState {
    /// The requests handed to rmcp and not answered yet; `true` once the client cancelled one.
    requests: HashMap<RequestId, bool>,
    /// The reader's answers to refused lines not written yet.
    refusals: usize,
}

impl Owed {
    fn lock(&self) -> MutexGuard<'_, OwedState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Blocks while `n` or more answers are owed.
    fn wait_below(&self, n: usize) {
        let mut s = self.lock();
        while s.requests.len() + s.refusals >= n {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn settle(&self, what: &Settles) {
        let mut s = self.lock();
        match what {
            Settles::Nothing => return,
            Settles::Request(id) => {
                s.requests.remove(id);
            }
            Settles::Refusal => s.refusals = s.refusals.saturating_sub(1),
        }
        drop(s);
        self.changed.notify_all();
    }

    /// Marks `id` cancelled, if it is still owed.
    fn cancel(&self, id: &RequestId) {
        if let Some(cancelled) = self.lock().requests.get_mut(id) {
            *cancelled = true;
        }
    }

    /// Whether `id` was cancelled; if so it is settled now, its answer unwritten.
    fn settle_if_cancelled(&self, id: &RequestId) -> bool {
        let mut s = self.lock();
        if s.requests.get(id) != Some(&true) {
            return false;
        }
        s.requests.remove(id);
        drop(s);
        self.changed.notify_all();
        true
    }
}

impl Stdio {
    /// Starts the reader and writer threads.
    pub(crate) fn start() -> io::Result<Stdio> {
        let owed = Arc::new(Owed::default());
        let (incoming_tx, incoming) = tokio::sync::mpsc::channel(MAX_IN_FLIGHT);
        let (out, out_rx) = mpsc::channel::<Outgoing>();
        let writer_owed = Arc::clone(&owed);
        std::thread::Builder::new()
            .name("wikidex-mcp-out".into())
            .spawn(move || write_lines(&out_rx, &writer_owed))?;
        let (reader_out, reader_owed) = (out.clone(), Arc::clone(&owed));
        std::thread::Builder::new()
            .name("wikidex-mcp-in".into())
            .spawn(move || read_lines(&incoming_tx, &reader_out, &reader_owed))?;
        Ok(Stdio {
            incoming,
            out: Some(out),
            owed,
        })
    }
}

impl Transport<RoleServer> for Stdio {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let settles = match &item {
            JsonRpcMessage::Response(r) => Settles::Request(r.id.clone()),
            JsonRpcMessage::Error(e) => e.id.clone().map_or(Settles::Nothing, Settles::Request),
            _ => Settles::Nothing,
        };
        let queued = match &settles {
            Settles::Request(id) if self.owed.settle_if_cancelled(id) => None,
            _ => Some(self.queue(&item, settles)),
        };
        async move {
            match queued {
                None => Ok(()),
                Some(Err(e)) => Err(e),
                Some(Ok(done)) => done.await.unwrap_or_else(|_| Err(closed())),
            }
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        // Every answer was written before rmcp's drain ended; the writer thread ends once the
        // reader's sender is gone too.
        self.out = None;
        Ok(())
    }
}

impl Stdio {
    /// Hands `item` to the writer thread; the receiver hears when it is written.
    fn queue(
        &self,
        item: &ServerJsonRpcMessage,
        settles: Settles,
    ) -> io::Result<tokio::sync::oneshot::Receiver<io::Result<()>>> {
        let line = match serde_json::to_vec(item) {
            Ok(line) => line,
            Err(e) => {
                self.owed.settle(&settles);
                return Err(e.into());
            }
        };
        let (done, written) = tokio::sync::oneshot::channel();
        let message = Outgoing {
            line,
            settles,
            done: Some(done),
        };
        match self.out.as_ref().map(|out| out.send(message)) {
            Some(Ok(())) => Ok(written),
            Some(Err(mpsc::SendError(message))) => {
                self.owed.settle(&message.settles);
                Err(closed())
            }
            None => Err(closed()),
        }
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "standard output is closed")
}

/// The writer thread: writes each message as a line, flushing after each batch of those
/// waiting, then settles what they answer.
fn write_lines(queue: &mpsc::Receiver<Outgoing>, owed: &Owed) {
    let stdout = io::stdout();
    let mut failed: Option<io::ErrorKind> = None;
    let (mut batch, mut bytes) = (Vec::new(), Vec::new());
    while let Ok(first) = queue.recv() {
        batch.push(first);
        while batch.len() < MAX_IN_FLIGHT {
            match queue.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        if failed.is_none() {
            bytes.clear();
            for m in &batch {
                bytes.extend_from_slice(&m.line);
                bytes.push(b'\n');
            }
            let mut out = stdout.lock();
            if let Err(e) = out.write_all(&bytes).and_then(|()| out.flush()) {
                failed = Some(e.kind());
            }
        }
        for m in batch.drain(..) {
            owed.settle(&m.settles);
            if let Some(done) = m.done {
                let _ = done.send(failed.map_or(Ok(()), |k| Err(io::Error::from(k))));
            }
        }
        if bytes.capacity() > MAX_LINE_BYTES {
            bytes = Vec::new();
        }
    }
}

/// The reader thread: reads standard input line by line, at most [`MAX_IN_FLIGHT`] requests
/// ahead of the answers, and hands the messages to rmcp. At the end of input it waits for
/// every answer owed to be written, then tells rmcp (by dropping `incoming`).
fn read_lines(
    incoming: &tokio::sync::mpsc::Sender<ClientJsonRpcMessage>,
    out: &mpsc::Sender<Outgoing>,
    owed: &Owed,
) {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let mut line = Vec::new();
    loop {
        owed.wait_below(MAX_IN_FLIGHT);
        let message = match read_line(&mut input, &mut line) {
            Ok(Line::Read) => parse(&line),
            Ok(Line::TooLong(Some(id))) => Parsed::Refuse(
                id,
                format!("message longer than {MAX_LINE_BYTES} bytes (one line of input)"),
            ),
            Ok(Line::TooLong(None)) => Parsed::Skip,
            // A read error ends the input as its end does.
            Ok(Line::End) | Err(_) => break,
        };
        if line.capacity() > MAX_LINE_BYTES {
            line = Vec::new();
        }
        let message = match message {
            Parsed::Skip => continue,
            Parsed::Refuse(id, why) => {
                refuse(out, owed, id, why);
                continue;
            }
            Parsed::Message(m) => *m,
        };
        match &message {
            JsonRpcMessage::Request(r) => {
                let mut s = owed.lock();
                if s.requests.contains_key(&r.id) {
                    drop(s);
                    let why = format!(
                        "request id {} is in use by a request not answered yet",
                        r.id
                    );
                    refuse(out, owed, r.id.clone().into_json_value(), why);
                    continue;
                }
                s.requests.insert(r.id.clone(), false);
            }
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification {
                    if let Some(id) = &c.params.request_id {
                        owed.cancel(id);
                    }
                    continue;
                }
            }
            _ => {}
        }
        if incoming.blocking_send(message).is_err() {
            // The service has stopped.
            return;
        }
    }
    owed.wait_below(1);
}

/// The reader's own answer to a line: an `Invalid Request` error for `id`.
fn refuse(out: &mpsc::Sender<Outgoing>, owed: &Owed, id: Value, why: String) {
    let reply = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": ErrorCode::INVALID_REQUEST.0, "message": why },
    });
    owed.lock().refusals += 1;
    let message = Outgoing {
        line: reply.to_string().into_bytes(),
        settles: Settles::Refusal,
        done: None,
    };
    if out.send(message).is_err() {
        owed.settle(&Settles::Refusal);
    }
}

/// What [`read_line`] read.
enum Line {
    /// A line, in the buffer.
    Read,
    /// A line over [`MAX_LINE_BYTES`], not kept, with its `id` (null when it cannot be read;
    /// `None` for an object without one, a notification, which is not answered).
    TooLong(Option<Value>),
    /// The end of input.
    End,
}

/// Reads the next line (its newline included) into `line`; a last line without a newline
/// counts. A line over [`MAX_LINE_BYTES`] is read to its end but not kept: only its `id` is
/// looked for as it goes by.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<Line> {
    line.clear();
    let mut too_long: Option<IdScanner> = None;
    loop {
        let (taken, ended) = {
            let available = match input.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(match too_long {
                    Some(scan) => Line::TooLong(scan.id()),
                    None if line.is_empty() => Line::End,
                    None => Line::Read,
                });
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let taken = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..taken];
            let content = line.len() + taken - usize::from(newline.is_some());
            match &mut too_long {
                Some(scan) => scan.feed(chunk),
                None if content > MAX_LINE_BYTES => {
                    let mut scan = IdScanner::default();
                    scan.feed(line);
                    scan.feed(chunk);
                    line.clear();
                    too_long = Some(scan);
                }
                None => line.extend_from_slice(chunk),
            }
            (taken, newline.is_some())
        };
        input.consume(taken);
        if ended {
            return Ok(match too_long {
                Some(scan) => Line::TooLong(scan.id()),
                None => Line::Read,
            });
        }
    }
}

/// What a line holds.
enum Parsed {
    Message(Box<ClientJsonRpcMessage>),
    /// Answer with an `Invalid Request` error for this id, saying why.
    Refuse(Value, String),
    Skip,
}

fn parse(line: &[u8]) -> Parsed {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Skip;
    }
    let e = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(m) => return Parsed::Message(Box::new(m)),
        Err(e) => e,
    };
    // Not JSON: ignored, as rmcp does (see `Stdio`).
    if !matches!(e.classify(), serde_json::error::Category::Data) {
        return Parsed::Skip;
    }
    let Ok(v) = serde_json::from_slice::<Value>(line) else {
        return Parsed::Skip;
    };
    if let Value::Object(o) = &v {
        // An answer or a notification is never answered, even one we cannot read.
        if o.contains_key("result") || o.contains_key("error") {
            return Parsed::Skip;
        }
        if o.contains_key("method") && !o.contains_key("id") {
            return Parsed::Skip;
        }
    }
    let id = match v.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    };
    Parsed::Refuse(id, format!("invalid request: {e}"))
}

/// Finds the `"id"` member of a JSON object read in pieces, without keeping the object: the
/// id of a line too long to keep. Tracks strings, escapes and nesting; an id that is not a
/// number or a string, or is longer than any id should be, is not found.
#[derive(Default)]
struct IdScanner {
    /// Nesting: 0 before the object, 1 inside it.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// Inside the object, the next string is a member's name.
    want_key: bool,
    reading_key: bool,
    key: Vec<u8>,
    /// Reading the value of the member named `id`.
    capturing: bool,
    value: Vec<u8>,
    /// Done: the id's bytes, or `None` when the object ended without one.
    found: Option<Option<Vec<u8>>>,
    /// The line is not an object.
    not_object: bool,
}

impl IdScanner {
    /// Longest id kept, in bytes.
    const MAX_ID: usize = 1024;

    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.found.is_some() {
                return;
            }
            self.step(b);
        }
    }

    fn step(&mut self, b: u8) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.reading_key {
                    self.reading_key = false;
                    self.capture(b);
                    return;
                }
            }
            if self.reading_key {
                // Enough of the name to tell `id` from the others.
                if self.key.len() < 3 {
                    self.key.push(b);
                }
            } else {
                self.capture(b);
            }
            return;
        }
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            // A byte order mark before the object.
            0xEF | 0xBB | 0xBF if self.depth == 0 => {}
            b'{' if self.depth == 0 => {
                self.depth = 1;
                self.want_key = true;
            }
            _ if self.depth == 0 => {
                self.not_object = true;
                self.found = Some(None);
            }
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.want_key {
                    self.want_key = false;
                    self.reading_key = true;
                    self.key.clear();
                } else {
                    self.capture(b);
                }
            }
            b':' if self.depth == 1 => {
                self.capturing = self.key == b"id";
                self.value.clear();
            }
            b',' if self.depth == 1 => self.end_value(),
            b'}' | b']' if self.depth == 1 => {
                self.end_value();
                self.found.get_or_insert(None);
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.capture(b);
            }
            b'}' | b']' => {
                self.depth -= 1;
                self.capture(b);
            }
            _ => self.capture(b),
        }
    }

    /// `b` is part of a member's value.
    fn capture(&mut self, b: u8) {
        if self.capturing && self.value.len() <= Self::MAX_ID {
            self.value.push(b);
        }
    }

    /// A member's value ended.
    fn end_value(&mut self) {
        if std::mem::take(&mut self.capturing) {
            self.found = Some(Some(std::mem::take(&mut self.value)));
        }
        self.want_key = true;
    }

    /// The id found, as JSON: a number or a string, else null; `None` for a whole object
    /// without an `id` member.
    fn id(self) -> Option<Value> {
        let raw = match self.found {
            Some(Some(raw)) => raw,
            Some(None) if !self.not_object => return None,
            // The line ended inside the id's value (a last line cut short).
            _ if self.capturing => self.value,
            _ => return Some(Value::Null),
        };
        Some(match serde_json::from_slice::<Value>(&raw) {
            Ok(id @ (Value::Number(_) | Value::String(_))) => id,
            _ => Value::Null,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id [`IdScanner`] finds in `line`, fed in pieces of `step` bytes.
    fn scan(line: &str, step: usize) -> Option<Value> {
        let mut scanner = IdScanner::default();
        for piece in line.as_bytes().chunks(step) {
            scanner.feed(piece);
        }
        scanner.id()
    }

    #[test]
    fn the_scanner_finds_the_top_level_id_wherever_it_is() {
        let cases = [
            (r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#, Some(json!(7))),
            (
                r#"{"method":"x","params":{"id":1,"q":"\"id\":3"},"id":"a\"b"}"#,
                Some(json!("a\"b")),
            ),
            (r#"  {"params":[{"id":1}], "id" : -12 }"#, Some(json!(-12))),
            (r#"{"idx":1,"ids":[2],"method":"m"}"#, None),
            (r#"{"jsonrpc":"2.0","method":"notifications/x"}"#, None),
            (r#"{"id":{"a":1},"method":"m"}"#, Some(Value::Null)),
            (r#"{"id":null}"#, Some(Value::Null)),
            (r#"[{"id":1}]"#, Some(Value::Null)),
            (r#"{"method":"m","params":{"q":"cut"#, Some(Value::Null)),
            (r#"{"method":"m","id":99"#, Some(json!(99))),
            ("\u{feff}{\"id\":5}", Some(json!(5))),
        ];
        for (line, want) in cases {
            for step in [1, 2, 3, 1000] {
                assert_eq!(scan(line, step), want, "{line} in pieces of {step}");
            }
        }
    }

    #[test]
    fn a_line_over_the_cap_is_read_to_its_end_and_not_kept() {
        let long = format!(
            "{{\"method\":\"m\",\"params\":\"{}\",\"id\":3}}\n{{\"id\":4}}\n",
            "x".repeat(MAX_LINE_BYTES)
        );
        let mut input = io::BufReader::new(long.as_bytes());
        let mut line = Vec::new();
        assert!(matches!(
            read_line(&mut input, &mut line),
            Ok(Line::TooLong(Some(id))) if id == json!(3)
        ));
        assert!(line.len() <= MAX_LINE_BYTES);
        assert!(matches!(read_line(&mut input, &mut line), Ok(Line::Read)));
        assert_eq!(line, b"{\"id\":4}\n");
        assert!(matches!(read_line(&mut input, &mut line), Ok(Line::End)));

        // At the cap exactly, a line is kept; a last line needs no newline.
        let exact = format!("\"{}\"", "y".repeat(MAX_LINE_BYTES - 2));
        let mut input = io::BufReader::new(exact.as_bytes());
        assert!(matches!(read_line(&mut input, &mut line), Ok(Line::Read)));
        assert_eq!(line.len(), MAX_LINE_BYTES);
    }

    #[test]
    fn lines_that_are_not_messages() {
        assert!(matches!(parse(b"\r\n"), Parsed::Skip));
        assert!(matches!(parse(b"{not json"), Parsed::Skip));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"bogus/note","params":3}"#),
            Parsed::Skip
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"result":5}"#),
            Parsed::Message(_) | Parsed::Skip
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":"q","method":"tools/call","params":7}"#),
            Parsed::Refuse(id, _) if id == json!("q")
        ));
        assert!(matches!(parse(b"[1,2]"), Parsed::Refuse(Value::Null, _)));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#),
            Parsed::Message(m) if matches!(*m, JsonRpcMessage::Request(_))
        ));
    }
}
