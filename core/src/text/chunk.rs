//! The chunker: splits a page body into overlapping chunks.
//!
//! Blocks are separated by blank lines (a fenced code block is one block, blank lines and
//! all); a heading with nothing under it before the next blank line is glued to the block that
//! follows, so headings stay with their text. Blocks are packed up to `max_tokens`
//! whitespace-separated tokens; a block larger than that is split at sentence boundaries (and a
//! sentence larger than that at token boundaries). The next chunk starts with the last
//! sentences of the previous one, up to `overlap_tokens`. A short page is one chunk; an empty
//! page is one empty chunk, so every page stays findable by its key, title and summary.
//!
//! Every chunk is a contiguous byte span of the page, so its text is a slice of the source and
//! citations can point back at it. The output depends only on the input and the config.

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

pub use crate::data::config::ChunkConfig;
use crate::data::error::{Error, Result};
use crate::text::analyze::token_count;

/// One chunk's place in the text it was cut from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset one past the last byte.
    pub end: usize,
}

/// One chunk's row in the chunk table; its page and ordinal come from the table's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ChunkRecord {
    /// Index of the page in the page list.
    pub page: u32,
    /// Byte span in the page's text.
    pub start: u32,
    /// Byte span end (exclusive).
    pub end: u32,
}

impl ChunkRecord {
    /// The content hash of the chunk, cut from `text`, its page's (or raw document's) text. A
    /// blob stores none: an index makes a chunk's when it is first asked for
    /// ([`crate::Index::chunk_hash`]), a raw chunk's each time.
    pub(crate) fn hash(&self, text: &str) -> ChunkHash {
        ChunkHash::of(&text[self.start as usize..self.end as usize])
    }
}

/// A chunk's content hash: the first 128 bits of the BLAKE3 hash of its text. It reads and
/// writes as [`content_hash`] spells it (32 lowercase hex digits), and is held as bytes, so a
/// chunk table is copied and freed without a string a chunk.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct ChunkHash([u8; 16]);

impl ChunkHash {
    /// The hash of `text`.
    pub(crate) fn of(text: &str) -> ChunkHash {
        let mut out = [0; 16];
        out.copy_from_slice(&blake3::hash(text.as_bytes()).as_bytes()[..16]);
        ChunkHash(out)
    }

    /// The hash spelled by `hex` (32 hex digits), if it spells one.
    fn parse(hex: &str) -> Option<ChunkHash> {
        let digits = hex.as_bytes();
        if digits.len() != 32 {
            return None;
        }
        let digit = |b: u8| char::from(b).to_digit(16).map(|d| d as u8);
        let mut out = [0; 16];
        for (o, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
            *o = digit(pair[0])? << 4 | digit(pair[1])?;
        }
        Some(ChunkHash(out))
    }
}

impl std::fmt::Display for ChunkHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::fmt::Debug for ChunkHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl Serialize for ChunkHash {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ChunkHash {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<ChunkHash, D::Error> {
        let hex = String::deserialize(d)?;
        ChunkHash::parse(&hex)
            .ok_or_else(|| serde::de::Error::custom("a chunk hash is 32 hex digits"))
    }
}

/// Checks a chunk table against the texts it cuts: chunks in document order, every document
/// with at least one chunk, every span inside its document's text.
pub(crate) fn validate_chunk_table<'a>(
    chunks: &[ChunkRecord],
    n_docs: usize,
    text: impl Fn(usize) -> Option<&'a str>,
) -> Result<()> {
    let mut expect_page = 0usize;
    for (i, c) in chunks.iter().enumerate() {
        let p = c.page as usize;
        if p != expect_page && p != expect_page + 1 {
            return Err(Error::corrupt(format!("chunk {i} is out of page order")));
        }
        if i == 0 && p != 0 {
            return Err(Error::corrupt(
                "first chunk does not belong to the first page",
            ));
        }
        expect_page = p;
        let t = text(p)
            .ok_or_else(|| Error::corrupt(format!("chunk {i} points at missing page {p}")))?;
        let (s, e) = (c.start as usize, c.end as usize);
        if s > e || t.get(s..e).is_none() {
            return Err(Error::corrupt(format!(
                "chunk {i} span {s}..{e} is outside its page"
            )));
        }
    }
    if n_docs > 0 && (chunks.is_empty() || expect_page + 1 != n_docs) {
        return Err(Error::corrupt("a page has no chunk"));
    }
    Ok(())
}

/// Page id → the content hash and id number of each of its chunks, in order: what an index
/// gives the next build of its pages so that edits keep chunk ids ([`carry_numbers`]).
pub(crate) type PriorChunks = std::collections::HashMap<String, Vec<(ChunkHash, u32)>>;

/// Checks a chunk table's id numbers: none (every number is the chunk's position in its
/// page), or one per chunk and no two alike within a page.
pub(crate) fn validate_numbers(chunks: &[ChunkRecord], numbers: &[u32]) -> Result<()> {
    if numbers.is_empty() {
        return Ok(());
    }
    if numbers.len() != chunks.len() {
        return Err(Error::corrupt(format!(
            "{} chunk numbers for {} chunks",
            numbers.len(),
            chunks.len()
        )));
    }
    let mut seen = std::collections::HashSet::new();
    for (i, (c, &n)) in chunks.iter().zip(numbers).enumerate() {
        if !seen.insert((c.page, n)) {
            return Err(Error::corrupt(format!(
                "chunk {i} repeats the number {n} within its page"
            )));
        }
    }
    Ok(())
}

/// The table position of the chunk numbered `number` among the `count` chunks of one page
/// that start at table position `first`, given the table's id numbers (empty: a chunk's
/// number is its position in its page).
pub(crate) fn find_number(numbers: &[u32], first: u32, count: u32, number: u32) -> Option<u32> {
    if numbers.is_empty() {
        return (number < count).then_some(first + number);
    }
    let range = numbers.get(first as usize..(first + count) as usize)?;
    range
        .iter()
        .position(|&n| n == number)
        .map(|i| first + i as u32)
}

/// The id of the chunk numbered `n` of the page with id `page_id` (a chunk's number is its
/// position in the page unless edits kept an older one, see [`crate::Chunk::id`]).
pub fn chunk_id(page_id: &str, n: usize) -> String {
    format!("{page_id}::chunk_{n}")
}

/// The numbers in the ids of a page's new chunks (`{page_id}::chunk_{n}`), given the content
/// hashes of those chunks in order and the `(hash, number)` of the page's chunks in the index
/// before, so that an edit keeps the ids of the chunks it did not touch:
/// - a new chunk whose text is that of an old chunk takes its number (old chunks matched in
///   order, each once: the matched pairs keep their relative order);
/// - between two matched pairs (or before the first, or after the last), the new chunks that
///   matched nothing take the numbers of the old chunks there that matched nothing, in order:
///   an edited paragraph keeps its id (its hash tells a citation it drifted);
/// - any other new chunk takes a number above every old one, in order.
///
/// With no old chunks the numbers are the positions `0, 1, 2, ...`.
pub(crate) fn carry_numbers<H: Eq + std::hash::Hash>(new: &[H], old: &[(H, u32)]) -> Vec<u32> {
    use std::collections::{HashMap, VecDeque};
    let mut at: HashMap<&H, VecDeque<usize>> = HashMap::new();
    for (j, (hash, _)) in old.iter().enumerate() {
        at.entry(hash).or_default().push_back(j);
    }
    let mut used = vec![false; old.len()];
    let mut out: Vec<Option<u32>> = vec![None; new.len()];
    // Anchors: new chunk i takes the first old chunk with its text after the last anchor.
    let mut anchors: Vec<(usize, usize)> = Vec::new();
    let mut after = 0usize;
    for (i, hash) in new.iter().enumerate() {
        let Some(queue) = at.get(hash) else { continue };
        if let Some(&j) = queue.iter().find(|&&j| j >= after) {
            anchors.push((i, j));
            used[j] = true;
            out[i] = Some(old[j].1);
            after = j + 1;
        }
    }
    // A chunk moved out of order still finds its text.
    for (i, hash) in new.iter().enumerate() {
        if out[i].is_some() {
            continue;
        }
        if let Some(&j) = at.get(hash).and_then(|q| q.iter().find(|&&j| !used[j])) {
            used[j] = true;
            out[i] = Some(old[j].1);
        }
    }
    // Between anchors, edited chunks take the free numbers of that stretch, in order.
    let mut bounds = anchors.clone();
    bounds.push((new.len(), old.len()));
    let (mut i0, mut j0) = (0usize, 0usize);
    for (i1, j1) in bounds {
        let free: Vec<usize> = (j0..j1).filter(|&j| !used[j]).collect();
        let mut free = free.into_iter();
        for slot in out[i0..i1].iter_mut().filter(|o| o.is_none()) {
            match free.next() {
                Some(j) => {
                    used[j] = true;
                    *slot = Some(old[j].1);
                }
                None => break,
            }
        }
        (i0, j0) = (i1 + 1, j1 + 1);
    }
    let mut next = old.iter().map(|&(_, n)| n + 1).max().unwrap_or(0);
    out.into_iter()
        .map(|o| {
            o.unwrap_or_else(|| {
                next += 1;
                next - 1
            })
        })
        .collect()
}

/// Splits a chunk id into its page id and number; `None` if it is not shaped like one.
pub fn parse_chunk_id(id: &str) -> Option<(&str, usize)> {
    let (page, n) = id.rsplit_once("::chunk_")?;
    if page.is_empty() || n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if n.len() > 1 && n.starts_with('0') {
        return None;
    }
    Some((page, n.parse().ok()?))
}

/// The content hash of a chunk's text: the first 128 bits of its BLAKE3 hash, in hex.
pub fn content_hash(text: &str) -> String {
    ChunkHash::of(text).to_string()
}

/// Splits `text` into chunk spans (byte offsets into `text`). Never returns an empty list.
pub fn split(text: &str, cfg: &ChunkConfig) -> Vec<Span> {
    let max = cfg.max_tokens.max(1) as usize;
    let overlap = cfg.overlap_tokens as usize;
    let pieces: Vec<Span> = units(text)
        .into_iter()
        .flat_map(|u| fit(text, u, max))
        .collect();
    if pieces.is_empty() {
        return vec![Span { start: 0, end: 0 }];
    }
    let mut chunks = Vec::new();
    let mut current: Option<Span> = None;
    let mut current_tokens = 0;
    // The last piece packed into `current`, its tokens, and where `current` ended before it.
    let mut last: Option<(Span, usize, usize)> = None;
    for piece in pieces {
        let piece_tokens = token_count(&text[piece.start..piece.end]);
        if let Some(cur) = current {
            if current_tokens + piece_tokens <= max {
                last = Some((piece, piece_tokens, cur.end));
                current = Some(Span {
                    start: cur.start,
                    end: piece.end,
                });
                current_tokens += piece_tokens;
                continue;
            }
            // A heading never ends a chunk: it moves to the next one, with its text.
            if let Some((heading, heading_tokens, before)) =
                last.filter(|(p, _, _)| p.start > cur.start && is_heading_piece(text, *p))
            {
                chunks.push(Span {
                    start: cur.start,
                    end: before,
                });
                if heading_tokens + piece_tokens <= max {
                    last = Some((piece, piece_tokens, heading.end));
                    current = Some(Span {
                        start: heading.start,
                        end: piece.end,
                    });
                    current_tokens = heading_tokens + piece_tokens;
                    continue;
                }
                chunks.push(heading);
                last = None;
                current = Some(piece);
                current_tokens = piece_tokens;
                continue;
            }
            chunks.push(cur);
            let (tail_start, tail_tokens) = overlap_tail(text, cur, overlap);
            if tail_tokens > 0 && tail_tokens + piece_tokens <= max {
                last = Some((piece, piece_tokens, cur.end));
                current = Some(Span {
                    start: tail_start,
                    end: piece.end,
                });
                current_tokens = tail_tokens + piece_tokens;
                continue;
            }
        }
        last = None;
        current = Some(piece);
        current_tokens = piece_tokens;
    }
    chunks.extend(current);
    chunks
}

/// Whether every line of the piece is a Markdown heading.
fn is_heading_piece(text: &str, piece: Span) -> bool {
    let t = &text[piece.start..piece.end];
    !t.trim().is_empty()
        && t.lines()
            .filter(|l| !l.trim().is_empty())
            .all(is_heading_line)
}

/// Blocks separated by blank lines, fences kept whole, heading-only blocks glued to the next.
fn units(text: &str) -> Vec<Span> {
    let mut blocks: Vec<(Span, bool)> = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut block: Option<Span> = None;
    let mut heading_only = true;
    let mut pos = 0;
    while pos < text.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        let line = &text[pos..line_end];
        let content_end = pos + line.trim_end().len();
        track_fence(&mut fence, line);
        if line.trim().is_empty() && fence.is_none() {
            if let Some(b) = block.take() {
                blocks.push((b, heading_only));
            }
        } else {
            let is_heading = is_heading_line(line);
            match &mut block {
                Some(b) => {
                    b.end = content_end.max(b.end);
                    heading_only &= is_heading;
                }
                None => {
                    block = Some(Span {
                        start: pos,
                        end: content_end,
                    });
                    heading_only = is_heading;
                }
            }
        }
        pos = line_end;
    }
    if let Some(b) = block {
        blocks.push((b, heading_only));
    }
    let mut out: Vec<Span> = Vec::new();
    let mut pending_heading: Option<usize> = None;
    for (b, heading) in blocks {
        let start = pending_heading.take().unwrap_or(b.start);
        if heading {
            pending_heading = Some(start);
        } else {
            out.push(Span { start, end: b.end });
        }
    }
    if let Some(start) = pending_heading {
        let end = text.trim_end().len().max(start);
        out.push(Span { start, end });
    }
    out
}

/// The 1-based lines of `text` that the byte span `start..end` covers, first and last (a
/// span that ends with a line break ends on that line, not the next). Offsets past the end
/// are clamped.
pub(crate) fn line_range(text: &str, start: usize, end: usize) -> (u32, u32) {
    let start = start.min(text.len());
    let end = end.clamp(start, text.len());
    let lines_before = |at: usize| {
        text.as_bytes()[..at]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
    };
    let first = lines_before(start);
    let last = if end > start {
        lines_before(end - 1)
    } else {
        first
    };
    let line = |n: usize| u32::try_from(n + 1).unwrap_or(u32::MAX);
    (line(first), line(last))
}

/// The ATX headings (`#` to `######`) in force at byte `at` of `text`, outermost first: each
/// heading line that starts before `at` (or at it) replaces the headings of its level and
/// deeper. Scanning starts at byte `from` (the body, after the frontmatter); lines inside
/// fenced code blocks are not headings. The text of a heading is its line without the `#`s
/// (leading and closing) and surrounding spaces.
pub(crate) fn heading_path(text: &str, from: usize, at: usize) -> Vec<String> {
    let at = at.min(text.len());
    let mut path: Vec<(usize, String)> = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut pos = from.min(at);
    while pos <= at && pos < text.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        let line = &text[pos..line_end];
        let is_fence = track_fence(&mut fence, line);
        if !is_fence && fence.is_none() && is_heading_line(line) {
            let t = line.trim();
            let level = t.bytes().take_while(|&b| b == b'#').count();
            let title = t[level..]
                .trim()
                .trim_end_matches('#')
                .trim_end()
                .to_string();
            path.retain(|(l, _)| *l < level);
            path.push((level, title));
        }
        pos = line_end;
    }
    path.into_iter().map(|(_, t)| t).collect()
}

/// Follows fenced code blocks line by line: `fence` is the open fence (its character and
/// length), if any; `line` opens one, or closes the open one with a fence line of the same
/// character, at least as long and with nothing after it. Returns whether `line` is a fence.
fn track_fence(fence: &mut Option<(char, usize)>, line: &str) -> bool {
    let trimmed = line.trim_start();
    let Some((c, n)) = fence_marker(trimmed) else {
        return false;
    };
    match *fence {
        None => *fence = Some((c, n)),
        Some((fc, fnum)) if fc == c && n >= fnum && trimmed.trim_end().len() == n => *fence = None,
        _ => {}
    }
    true
}

fn fence_marker(trimmed_line: &str) -> Option<(char, usize)> {
    let c = trimmed_line.chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let n = trimmed_line.chars().take_while(|&x| x == c).count();
    (n >= 3).then_some((c, n))
}

fn is_heading_line(line: &str) -> bool {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return false;
    }
    let hashes = t.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes) && t[hashes..].chars().next().is_none_or(char::is_whitespace)
}

/// Splits a unit larger than `max` tokens: a Markdown table in it between rows (its header
/// and delimiter rows glued to the first body row), any other text at sentence boundaries,
/// then at token boundaries.
fn fit(text: &str, unit: Span, max: usize) -> Vec<Span> {
    let slice = &text[unit.start..unit.end];
    if token_count(slice) <= max {
        return vec![unit];
    }
    let mut out = Vec::new();
    let mut prose: Option<Span> = None;
    let flush = |prose: &mut Option<Span>, out: &mut Vec<Span>| {
        if let Some(p) = prose.take() {
            out.extend(fit_prose(text, p, max));
        }
    };
    for row in table_rows(text, unit) {
        match row {
            Row::Text(span) => {
                prose = Some(match prose {
                    Some(p) => Span {
                        start: p.start,
                        end: span.end,
                    },
                    None => span,
                });
            }
            Row::Table(span) => {
                flush(&mut prose, &mut out);
                if token_count(&text[span.start..span.end]) <= max {
                    out.push(span);
                } else {
                    out.extend(split_tokens(text, span, max));
                }
            }
        }
    }
    flush(&mut prose, &mut out);
    out
}

/// A line group of a unit: table rows (one body row, or the header and delimiter rows with
/// the first body row) or other text (consecutive lines).
enum Row {
    Table(Span),
    Text(Span),
}

/// The lines of `unit` (line breaks trimmed), table rows apart from the other text.
fn table_rows(text: &str, unit: Span) -> Vec<Row> {
    let mut lines: Vec<Span> = Vec::new();
    let mut pos = unit.start;
    while pos < unit.end {
        let end = text[pos..unit.end].find('\n').map_or(unit.end, |i| pos + i);
        lines.push(Span {
            start: pos,
            end: pos + text[pos..end].trim_end().len(),
        });
        pos = end + 1;
    }
    let line = |s: &Span| &text[s.start..s.end];
    if lines
        .iter()
        .any(|l| fence_marker(line(l).trim_start()).is_some())
    {
        // Fenced code: no table in it.
        return vec![Row::Text(unit)];
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let opens = is_table_row(line(&lines[i]))
            && lines.get(i + 1).is_some_and(|d| is_delimiter_row(line(d)));
        if !opens {
            out.push(Row::Text(lines[i]));
            i += 1;
            continue;
        }
        // The header and delimiter rows go with the first body row.
        let mut end = i + 2;
        if lines.get(end).is_some_and(|l| is_table_row(line(l))) {
            end += 1;
        }
        out.push(Row::Table(Span {
            start: lines[i].start,
            end: lines[end - 1].end,
        }));
        i = end;
        while i < lines.len() && is_table_row(line(&lines[i])) {
            out.push(Row::Table(lines[i]));
            i += 1;
        }
    }
    out
}

/// A line of a Markdown table: it holds a `|`.
pub(crate) fn is_table_row(line: &str) -> bool {
    !line.trim().is_empty() && line.contains('|')
}

/// A table's delimiter row (`|---|:--:|`): pipes, dashes, colons and spaces only, with at
/// least one pipe and one dash.
fn is_delimiter_row(line: &str) -> bool {
    let t = line.trim();
    t.contains('|')
        && t.contains('-')
        && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// For each chunk start in `starts` (byte offsets into `text`, ascending, none before
/// `from`), the span of the header of the Markdown table whose body the chunk starts in (the
/// header row and the delimiter row), if it starts at a body row: the chunk continues a table
/// cut between rows, and its header is indexed, embedded and returned with it. One pass over
/// the text from `from`; fenced code is not a table.
pub(crate) fn table_headers(text: &str, from: usize, starts: &[usize]) -> Vec<Option<Span>> {
    let mut out = vec![None; starts.len()];
    let mut next = 0usize;
    let mut fence: Option<(char, usize)> = None;
    let mut header: Option<Span> = None;
    let mut previous: Option<Span> = None;
    let mut pos = from.min(text.len());
    while pos < text.len() && next < starts.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        let line = &text[pos..line_end];
        let in_fence = track_fence(&mut fence, line) || fence.is_some();
        let body_row = !in_fence && header.is_some() && is_table_row(line);
        while next < starts.len() && starts[next] < line_end {
            if starts[next] >= pos && body_row {
                out[next] = header;
            }
            next += 1;
        }
        if in_fence || !is_table_row(line) {
            header = None;
        } else if header.is_none() && is_delimiter_row(line) {
            header = previous
                .filter(|p| is_table_row(&text[p.start..p.end]))
                .map(|p| Span {
                    start: p.start,
                    end: pos + line.trim_end().len(),
                });
        }
        previous = (!in_fence).then_some(Span {
            start: pos,
            end: pos + line.trim_end().len(),
        });
        pos = line_end;
    }
    out
}

/// The header of the table a chunk starting at byte `at` of `text` continues, as
/// [`table_headers`] finds it (scanning from byte `from`, the body's start).
pub(crate) fn table_header(text: &str, from: usize, at: usize) -> Option<String> {
    let from = from.min(at);
    table_headers(text, from, &[at])[0].map(|h| text[h.start..h.end].to_string())
}

/// Every chunk of a checked chunk table (each page's chunks together, in page order) as it is
/// indexed and embedded ([`indexed_texts`]), in table order, with its page.
pub(crate) fn indexed_table<'a>(
    pages: &'a [std::sync::Arc<crate::text::page::Page>],
    chunks: &[ChunkRecord],
) -> Vec<(&'a crate::text::page::Page, std::borrow::Cow<'a, str>)> {
    let mut out = Vec::with_capacity(chunks.len());
    for group in chunks.chunk_by(|a, b| a.page == b.page) {
        let page = &*pages[group[0].page as usize];
        let spans: Vec<(usize, usize)> = group
            .iter()
            .map(|c| (c.start as usize, c.end as usize))
            .collect();
        let from = (page.body_start as usize).min(spans[0].0);
        out.extend(
            indexed_texts(&page.text, from, &spans)
                .into_iter()
                .map(|t| (page, t)),
        );
    }
    out
}

/// The texts of the chunks `spans` (byte ranges of `text`, in order, none before `from`) as
/// they are indexed and embedded: each with the header of the table it continues before it
/// ([`table_headers`]), else its own text.
pub(crate) fn indexed_texts<'a>(
    text: &'a str,
    from: usize,
    spans: &[(usize, usize)],
) -> Vec<std::borrow::Cow<'a, str>> {
    let starts: Vec<usize> = spans.iter().map(|s| s.0).collect();
    table_headers(text, from, &starts)
        .into_iter()
        .zip(spans)
        .map(|(header, &(start, end))| match header {
            Some(h) => format!("{}\n{}", &text[h.start..h.end], &text[start..end]).into(),
            None => std::borrow::Cow::Borrowed(&text[start..end]),
        })
        .collect()
}

/// Splits prose larger than `max` tokens at sentence boundaries, then at token boundaries.
fn fit_prose(text: &str, unit: Span, max: usize) -> Vec<Span> {
    let slice = &text[unit.start..unit.end];
    if token_count(slice) <= max {
        return vec![unit];
    }
    let mut out = Vec::new();
    for (off, sentence) in slice.split_sentence_bound_indices() {
        let start = unit.start + off;
        let trimmed = sentence.trim_end();
        if trimmed.trim().is_empty() {
            continue;
        }
        let span = Span {
            start: start + (trimmed.len() - trimmed.trim_start().len()),
            end: start + trimmed.len(),
        };
        if token_count(&text[span.start..span.end]) <= max {
            out.push(span);
        } else {
            out.extend(split_tokens(text, span, max));
        }
    }
    out
}

/// Cuts a span into pieces of at most `max` tokens ([`token_count`]'s: a run of CJK text is
/// cut between characters).
fn split_tokens(text: &str, span: Span, max: usize) -> Vec<Span> {
    let slice = &text[span.start..span.end];
    let mut out = Vec::new();
    let mut piece_start: Option<usize> = None;
    let mut piece_end = 0;
    let mut n = 0;
    for (off, end) in crate::text::analyze::token_spans(slice) {
        if n == max {
            if let Some(s) = piece_start.take() {
                out.push(Span {
                    start: span.start + s,
                    end: span.start + piece_end,
                });
            }
            n = 0;
        }
        piece_start.get_or_insert(off);
        piece_end = end;
        n += 1;
    }
    if let Some(s) = piece_start {
        out.push(Span {
            start: span.start + s,
            end: span.start + piece_end,
        });
    }
    out
}

/// The start of the trailing sentences of `chunk` that fit in `budget` tokens, and their
/// token count; never the whole chunk (the next chunk must move forward).
fn overlap_tail(text: &str, chunk: Span, budget: usize) -> (usize, usize) {
    if budget == 0 {
        return (chunk.end, 0);
    }
    let slice = &text[chunk.start..chunk.end];
    let sentences: Vec<(usize, &str)> = slice.split_sentence_bound_indices().collect();
    let mut start = chunk.end;
    let mut tokens = 0;
    for &(off, sentence) in sentences.iter().skip(1).rev() {
        let t = token_count(sentence);
        if tokens + t > budget {
            break;
        }
        tokens += t;
        start = chunk.start + off;
    }
    if tokens == 0 {
        return (chunk.end, 0);
    }
    // Skip leading whitespace so the chunk starts on text.
    let lead = text[start..chunk.end].len() - text[start..chunk.end].trim_start().len();
    (start + lead, tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page of prose and a table of `rows` rows of about 6 tokens each.
    fn table_page(rows: usize) -> String {
        let mut t = String::from("Intro paragraph about exports.\n\n| export | recipient | schedule |\n|---|:---:|---|\n");
        for i in 0..rows {
            t.push_str(&format!("| export_{i} | account {i} | daily |\n"));
        }
        t.push_str("\nClosing words.\n");
        t
    }

    #[test]
    fn a_table_too_large_for_a_chunk_is_cut_between_rows_and_each_part_knows_its_header() {
        let text = table_page(30);
        let cfg = ChunkConfig {
            max_tokens: 40,
            overlap_tokens: 0,
        };
        let spans = split(&text, &cfg);
        assert!(spans.len() >= 4, "{spans:?}");
        let header = "| export | recipient | schedule |\n|---|:---:|---|";
        let starts: Vec<usize> = spans.iter().map(|s| s.start).collect();
        let headers = table_headers(&text, 0, &starts);
        let mut continued = 0;
        for (span, h) in spans.iter().zip(&headers) {
            let t = &text[span.start..span.end];
            // Never cut inside a row: every line of a chunk in the table is a whole row.
            for line in t.lines().filter(|l| l.starts_with('|')) {
                assert!(line.ends_with('|'), "a row cut: {line:?} in {t:?}");
            }
            match h {
                Some(h) => {
                    continued += 1;
                    assert_eq!(&text[h.start..h.end], header);
                    assert!(t.starts_with("| export_"), "{t:?}");
                }
                // A chunk not starting at a body row: prose, or the table's start.
                None => assert!(!t.starts_with("| export_"), "{t:?}"),
            }
        }
        assert!(continued >= 2, "{headers:?}");
        // The header rows stay with the first body row.
        let first = spans
            .iter()
            .map(|s| &text[s.start..s.end])
            .find(|t| t.contains("| export |"))
            .unwrap();
        assert!(first.contains("| export_0 |"), "{first:?}");
        let indexed = indexed_texts(
            &text,
            0,
            &spans.iter().map(|s| (s.start, s.end)).collect::<Vec<_>>(),
        );
        assert!(indexed.iter().filter(|t| t.starts_with(header)).count() >= 2);
    }

    #[test]
    fn a_table_that_fits_is_one_piece_and_no_chunk_outside_a_table_gets_a_header() {
        let text = table_page(3);
        let spans = split(&text, &ChunkConfig::default());
        assert_eq!(spans.len(), 1);
        let fenced = "```\n| a | b |\n|---|---|\n| 1 | 2 |\n```\n\n| 3 | 4 |\n";
        let at = fenced.find("| 1 |").unwrap();
        let at2 = fenced.find("| 3 |").unwrap();
        assert_eq!(table_headers(fenced, 0, &[at, at2]), vec![None, None]);
        // A pipe in prose is not a table.
        let prose = "a | b\n\nc | d\n";
        assert_eq!(
            table_headers(prose, 0, &[prose.find("c |").unwrap()]),
            vec![None]
        );
    }

    #[test]
    fn a_chunk_hash_is_the_first_half_of_blake3_in_hex_and_reads_back() {
        // BLAKE3 of the empty text: af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc1...
        let empty = ChunkHash::of("");
        assert_eq!(empty.to_string(), "af1349b9f5f9a1a6a0404dea36dcc949");
        assert_eq!(content_hash(""), empty.to_string());
        let json = serde_json::to_string(&empty).unwrap();
        assert_eq!(json, "\"af1349b9f5f9a1a6a0404dea36dcc949\"");
        assert_eq!(serde_json::from_str::<ChunkHash>(&json).unwrap(), empty);
        for bad in [
            "",
            "af13",
            "xf1349b9f5f9a1a6a0404dea36dcc949",
            "é1349b9f5f9a1a6a0404dea36dcc94",
        ] {
            let err = serde_json::from_str::<ChunkHash>(&format!("\"{bad}\"")).unwrap_err();
            assert!(err.to_string().contains("32 hex digits"), "{bad}: {err}");
        }
    }

    #[test]
    fn carry_numbers_keeps_the_ids_of_chunks_an_edit_did_not_touch() {
        // No old chunks: positions.
        assert_eq!(carry_numbers(&["a", "b", "c"], &[]), vec![0, 1, 2]);
        let old = [("a", 0), ("b", 1), ("c", 2)];
        // Unchanged.
        assert_eq!(carry_numbers(&["a", "b", "c"], &old), vec![0, 1, 2]);
        // A paragraph added at the top: a new number, the others kept.
        assert_eq!(carry_numbers(&["n", "a", "b", "c"], &old), vec![3, 0, 1, 2]);
        // One edited in place keeps its number (its hash says it drifted).
        assert_eq!(carry_numbers(&["a", "B", "c"], &old), vec![0, 1, 2]);
        // One removed: its number is not given to another chunk.
        assert_eq!(carry_numbers(&["a", "c"], &old), vec![0, 2]);
        // Two in the place of one: the first takes its number, the second a new one.
        assert_eq!(carry_numbers(&["a", "x", "y", "c"], &old), vec![0, 1, 3, 2]);
        // Moved: it keeps its number.
        assert_eq!(carry_numbers(&["b", "c", "a"], &old), vec![1, 2, 0]);
        // Duplicated texts are matched in order, each old chunk once.
        assert_eq!(
            carry_numbers(&["a", "a"], &[("a", 4), ("a", 7)]),
            vec![4, 7]
        );
        // Numbers are unique whatever the edit.
        let old = [("a", 5), ("b", 2), ("c", 9)];
        let got = carry_numbers(&["c", "x", "a", "y", "b", "z"], &old);
        let mut sorted = got.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), got.len(), "{got:?}");
    }

    #[test]
    fn line_range_counts_the_file_lines_a_span_covers() {
        let text = "---\ntitle: A\n---\n# A\n\nOne.\nTwo.\n";
        let at = text.find("One").unwrap();
        let end = text.find("Two.").unwrap() + "Two.".len();
        assert_eq!(line_range(text, at, end), (6, 7));
        // A span ending with its line break ends on that line.
        assert_eq!(line_range(text, at, end + 1), (6, 7));
        assert_eq!(line_range(text, 0, 0), (1, 1));
        assert_eq!(line_range(text, 999, 1999), (8, 8));
    }

    #[test]
    fn heading_path_keeps_outer_headings_and_skips_code_and_frontmatter() {
        let text = "---\ntitle: '# not a heading'\n---\n# Runbook\n\n## Setup\n\nx\n\n## Escalation ##\n\n```sh\n# a comment\n```\n\n### Sev 1\n\nPage them.\n\n# Other\n";
        let body = text.find("# Runbook").unwrap();
        let at = |s: &str| text.find(s).unwrap();
        assert_eq!(heading_path(text, body, at("x\n")), ["Runbook", "Setup"]);
        assert_eq!(
            heading_path(text, body, at("```sh")),
            ["Runbook", "Escalation"]
        );
        assert_eq!(
            heading_path(text, body, at("Page them")),
            ["Runbook", "Escalation", "Sev 1"]
        );
        // A chunk that starts with a heading sits under it.
        assert_eq!(heading_path(text, body, at("# Other")), ["Other"]);
        assert!(heading_path(text, body, body - 1).is_empty());
    }

    fn texts<'a>(text: &'a str, cfg: &ChunkConfig) -> Vec<&'a str> {
        split(text, cfg)
            .iter()
            .map(|s| &text[s.start..s.end])
            .collect()
    }

    fn small() -> ChunkConfig {
        ChunkConfig {
            max_tokens: 20,
            overlap_tokens: 6,
        }
    }

    #[test]
    fn short_page_is_one_chunk() {
        let t = "# Title\n\nOne paragraph.\n\nAnother one.\n";
        assert_eq!(
            texts(t, &ChunkConfig::default()),
            ["# Title\n\nOne paragraph.\n\nAnother one."]
        );
    }

    #[test]
    fn empty_page_is_one_empty_chunk() {
        assert_eq!(
            split("", &ChunkConfig::default()),
            [Span { start: 0, end: 0 }]
        );
        assert_eq!(split("\n\n  \n", &ChunkConfig::default()).len(), 1);
    }

    #[test]
    fn paragraphs_pack_up_to_max_tokens_with_sentence_overlap() {
        let p1 = "Alpha beta gamma delta epsilon. Zeta eta theta iota kappa.";
        let p2 = "Lambda mu nu xi omicron. Pi rho sigma tau upsilon phi.";
        let t = format!("{p1}\n\n{p2}\n");
        let c = texts(&t, &small());
        assert_eq!(c.len(), 2, "{c:?}");
        assert_eq!(c[0], p1);
        // The second chunk carries the last sentence of the first.
        assert_eq!(c[1], format!("Zeta eta theta iota kappa.\n\n{p2}"));
    }

    #[test]
    fn heading_stays_with_the_text_under_it() {
        let para = "word ".repeat(15);
        let t = format!("{}\n\n## Section\n\n{}\n", para.trim(), para.trim());
        let c = texts(&t, &small());
        assert_eq!(c.len(), 2);
        assert!(c[1].starts_with("## Section"), "{c:?}");
        assert!(!c[0].contains("Section"));
    }

    #[test]
    fn heading_before_an_oversized_block_starts_the_next_chunk() {
        let intro = "w ".repeat(16);
        let body = "This sentence has exactly seven words here. ".repeat(8);
        let t = format!("{}\n\n## Section Title\n\n{}\n", intro.trim(), body.trim());
        let cfg = ChunkConfig {
            max_tokens: 20,
            overlap_tokens: 0,
        };
        let c = texts(&t, &cfg);
        assert!(
            c.iter()
                .all(|c| !c.trim_end().ends_with("## Section Title")),
            "{c:?}"
        );
        assert!(
            c.iter()
                .any(|c| c.starts_with("## Section Title\n\nThis sentence")),
            "{c:?}"
        );
    }

    #[test]
    fn fenced_code_with_blank_lines_is_one_block() {
        let t = "```sql\nselect 1\n\nfrom t\n```\n\nafter\n";
        let u = units(t);
        assert_eq!(&t[u[0].start..u[0].end], "```sql\nselect 1\n\nfrom t\n```");
    }

    #[test]
    fn oversized_sentence_is_cut_at_token_boundaries() {
        let t = "w ".repeat(50);
        let c = texts(&t, &small());
        assert!(c.iter().all(|c| token_count(c) <= 20), "{c:?}");
        assert_eq!(c.iter().map(|c| token_count(c)).sum::<usize>(), 50);
    }

    #[test]
    fn chunks_cover_every_token_in_order() {
        let t = "Intro sentence one. Intro two is here.\n\n# H\n\nBody ".to_string()
            + &"lorem ipsum dolor sit amet. ".repeat(30);
        let spans = split(&t, &small());
        assert!(spans
            .windows(2)
            .all(|w| w[0].start < w[1].start && w[0].end <= w[1].end));
        assert_eq!(spans.first().unwrap().start, 0);
        assert_eq!(spans.last().unwrap().end, t.trim_end().len());
        assert!(spans.iter().all(|s| token_count(&t[s.start..s.end]) <= 20));
    }

    #[test]
    fn chunk_ids_round_trip() {
        assert_eq!(
            chunk_id("user/alice/revenue", 3),
            "user/alice/revenue::chunk_3"
        );
        assert_eq!(parse_chunk_id("a::b::chunk_12"), Some(("a::b", 12)));
        assert_eq!(parse_chunk_id("a::chunk_"), None);
        assert_eq!(parse_chunk_id("a::chunk_01"), None);
        assert_eq!(parse_chunk_id("::chunk_1"), None);
        assert_eq!(parse_chunk_id("a::chunk_99999999999999999999999"), None);
    }

    #[test]
    fn config_ranges_are_checked() {
        assert!(ChunkConfig::default().validate().is_ok());
        assert!(ChunkConfig {
            max_tokens: 8,
            overlap_tokens: 0
        }
        .validate()
        .is_err());
        assert!(ChunkConfig {
            max_tokens: 100,
            overlap_tokens: 50
        }
        .validate()
        .is_err());
    }
}
