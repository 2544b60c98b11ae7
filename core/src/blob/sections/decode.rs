//! Reading a blob: the head, one section at a time (a ranged load), or every section (a whole
//! load); each section checked against its tag before it is inflated, and what it holds
//! checked against the head.

use std::sync::Arc;

use serde::Deserialize;

use super::head::{Head, StubOf};
use super::{tag, Part, TAG_LEN};
use crate::blob::inflate::inflate;
use crate::blob::{IndexData, HEADER_LEN};
use crate::data::error::{Error, Result};
use crate::graph::GraphSection;
use crate::lane::phrase::Positions;
use crate::lane::semantic::{VectorSection, VectorValues};
use crate::postings::{block_range, Dictionary, LexicalIndex, PostingBlock};
use crate::text::page::Page;
use crate::text::raw::RawSection;

/// How many bytes from the start of a blob its head ends at, read from the first
/// [`HEADER_LEN`] bytes (checked as far as they go: magic, version, flags).
///
/// # Errors
/// As a load of those bytes: [`Error::NotAnIndex`], [`Error::IncompatibleFormat`] for a
/// version this build does not read, [`Error::Corrupt`] for fewer than [`HEADER_LEN`] bytes.
pub(crate) fn head_end(prefix: &[u8]) -> Result<u64> {
    crate::blob::check_header(prefix)?;
    let mut len = [0u8; 8];
    len.copy_from_slice(&prefix[16..24]);
    u64::from_le_bytes(len)
        .checked_add(HEADER_LEN as u64)
        .ok_or_else(|| Error::corrupt("head length overflows"))
}

/// Reads the head from the blob's first bytes (at least up to [`head_end`]; bytes after it
/// are ignored), checking its hash and what [`Head::validate`] checks.
///
/// # Errors
/// As [`head_end`], and [`Error::Corrupt`] for a head cut short, changed or inconsistent.
pub(crate) fn decode_head(bytes: &[u8]) -> Result<Head> {
    let end = head_end(bytes)?;
    let Some(head) = usize::try_from(end)
        .ok()
        .and_then(|e| bytes.get(HEADER_LEN..e))
    else {
        return Err(Error::corrupt(format!(
            "truncated: the head ends at byte {end}, the bytes at {}",
            bytes.len()
        )));
    };
    let key = *blake3::hash(head).as_bytes();
    if key[..] != bytes[24..56] {
        return Err(Error::corrupt("head checksum mismatch"));
    }
    let mut head: Head = inflate_decode(head, || "the head".into())?;
    head.key = key;
    head.validate()?;
    Ok(head)
}

/// Inflates a section (or the head) and decodes it; `what` names it in an error.
fn inflate_decode<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    what: impl Fn() -> String,
) -> Result<T> {
    let raw =
        inflate(bytes).map_err(|e| Error::corrupt(format!("cannot inflate {}: {e}", what())))?;
    from_postcard(&raw, what)
}

/// Decodes the postcard bytes `raw` of a section (or the head) named `what`.
fn from_postcard<'a, T: Deserialize<'a>>(raw: &'a [u8], what: impl Fn() -> String) -> Result<T> {
    crate::data::error::take_decode_cause();
    postcard::from_bytes(raw).map_err(|e| {
        let cause = crate::data::error::take_decode_cause();
        match (e, cause) {
            (postcard::Error::SerdeDeCustom, Some(cause)) => {
                Error::corrupt(format!("cannot decode {}: {cause}", what()))
            }
            (e, _) => Error::corrupt(format!("cannot decode {}: {e}", what())),
        }
    })
}
/// What a whole decode ([`decode`]) keeps of the sections it has checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "fs"), allow(dead_code))] // `Checks` is a save's.
pub(crate) enum Keep {
    /// Everything: the index.
    Index,
    /// What the checks across sections read (the head, the dictionary, the postings and
    /// positions, the raw layer and the graph), not the pages (their stubs stand for them) or
    /// the vectors' values (`vectors` is `None`): each page block and the values are checked
    /// alone, as a load in parts checks them, and dropped. A save's check holds that much less.
    Checks,
}

/// A decoded section.
pub(crate) enum Loaded {
    Dictionary(Dictionary),
    Postings(PostingBlock),
    Positions(Vec<u8>),
    /// The pages of a block, and the spans of their chunks.
    Pages(Vec<Arc<Page>>, Vec<(u32, u32)>),
    Graph(GraphSection),
    Raw(RawSection),
    Vectors(VectorValues),
}

/// Checks section `i`'s bytes against its length and its tag (keyed with the head's hash) and
/// decodes them.
///
/// # Errors
/// [`Error::Corrupt`] for bytes that are not that section.
pub(crate) fn decode_section(
    head: &Head,
    stubs: &(impl StubOf + ?Sized),
    parts: &[Part],
    i: usize,
    bytes: &[u8],
) -> Result<Loaded> {
    let Some(&part) = parts.get(i) else {
        return Err(Error::corrupt(format!("no section {i}")));
    };
    let bytes = checked_body(head, i, bytes)?;
    decode_part(head, stubs, part, i, bytes)
}

/// Decodes section `i`, a `part`, from its deflated bytes.
fn decode_part(
    head: &Head,
    stubs: &(impl StubOf + ?Sized),
    part: Part,
    i: usize,
    bytes: &[u8],
) -> Result<Loaded> {
    let what = || format!("section {i}");
    Ok(match part {
        Part::Dictionary(j) => {
            let shard: Dictionary = inflate_decode(bytes, what)?;
            check_shard(head, j, &shard)?;
            Loaded::Dictionary(shard)
        }
        Part::Postings(_) => {
            let raw = inflate(bytes)
                .map_err(|e| Error::corrupt(format!("cannot inflate section {i}: {e}")))?;
            let block = PostingBlock::from_bytes(raw)
                .map_err(|e| Error::corrupt(format!("cannot decode {}: {e}", what())))?;
            Loaded::Postings(block)
        }
        Part::Positions(_) => {
            let raw = inflate(bytes)
                .map_err(|e| Error::corrupt(format!("cannot inflate section {i}: {e}")))?;
            // A block is stored as a `Vec<u8>`, which postcard writes as it writes bytes.
            Loaded::Positions(from_postcard::<&[u8]>(&raw, what)?.to_vec())
        }
        Part::Pages(b) => {
            let (pages, spans): (Vec<Page>, Vec<(u32, u32)>) = inflate_decode(bytes, what)?;
            check_page_block(head, stubs, b, &pages, &spans)?;
            Loaded::Pages(pages.into_iter().map(Arc::new).collect(), spans)
        }
        Part::Graph => Loaded::Graph(inflate_decode(bytes, what)?),
        Part::Raw => Loaded::Raw(inflate_decode(bytes, what)?),
        Part::Vectors => {
            let values = inflate_decode(bytes, what)?;
            // The head lists this part only with its description of the vectors.
            if let Some(meta) = &head.vectors {
                meta.validate_values(&values, head.chunks.len())?;
            }
            Loaded::Vectors(values)
        }
    })
}

/// Section `i`'s deflated bytes, once `bytes` are checked against its length and its tag
/// (keyed with the head's hash).
///
/// # Errors
/// [`Error::Corrupt`] for bytes that are not that section.
fn checked_body<'a>(head: &Head, i: usize, bytes: &'a [u8]) -> Result<&'a [u8]> {
    let mismatch = || Error::corrupt(format!("section {i} checksum mismatch"));
    let Some(s) = head.sections.get(i) else {
        return Err(Error::corrupt(format!("no section {i}")));
    };
    if bytes.len() != s.len as usize {
        return Err(mismatch());
    }
    match bytes.split_at_checked(TAG_LEN) {
        Some((t, rest)) if t == tag(&head.key, rest) => Ok(rest),
        _ => Err(mismatch()),
    }
}

/// Checks dictionary shard `j` against the head: as many terms as it spans, the first one the
/// head's, the terms and the other surface words sorted and between its first term and the
/// next shard's (the first shard's words may come before its first term), the own bits and
/// the frequencies as many as the terms, each other word's term inside the dictionary.
fn check_shard(head: &Head, j: usize, d: &Dictionary) -> Result<()> {
    let bad = |what: &str| Err(Error::corrupt(format!("dictionary shard {j}: {what}")));
    let terms = d.terms();
    if terms.len() != head.shard_terms(j).len()
        || terms.first() != head.dict_bounds.get(j).map(String::as_str)
    {
        return bad("not the terms the head lists");
    }
    if !d.is_shard_shaped() {
        return bad("its lists disagree");
    }
    // The head names each block's first term too: those of this shard's blocks.
    let first = head.shard_terms(j).start;
    let blocks = block_range(&head.dict_blocks, j, head.term_blocks.len());
    if blocks.into_iter().any(|b| {
        let t = head.term_blocks[b] as usize - first;
        terms.get(t) != head.block_bounds.get(b).map(String::as_str)
    }) {
        return bad("not the terms the head lists");
    }
    let next = head.dict_bounds.get(j + 1);
    let inside = |w: &str| next.is_none_or(|n| w < n.as_str());
    let words = d.other_words();
    if !terms.ascends()
        || !words.ascends()
        || !terms.last().is_none_or(inside)
        || !words.last().is_none_or(inside)
        || (j > 0
            && words
                .first()
                .is_some_and(|w| w < head.dict_bounds[j].as_str()))
        || d.other_terms().iter().any(|&t| t >= head.n_terms)
    {
        return bad("words out of order or out of range");
    }
    Ok(())
}

/// Checks the pages of page block `b` against the head: as many as the block spans, each
/// the page its stub stands for, its body offset inside its text, and a span for each of
/// their chunks, inside its page's text.
fn check_page_block(
    head: &Head,
    stubs: &(impl StubOf + ?Sized),
    b: usize,
    pages: &[Page],
    spans: &[(u32, u32)],
) -> Result<()> {
    let range = head.page_range(b);
    if pages.len() != range.len() {
        return Err(Error::corrupt(format!(
            "page block {b} holds {} pages, not {}",
            pages.len(),
            range.len()
        )));
    }
    for (page, p) in pages.iter().zip(range.clone()) {
        if !stubs.stub_of(p, page) {
            return Err(Error::corrupt(format!(
                "page {} differs from its entry in the head",
                page.key
            )));
        }
        if page.text.get(page.body_start as usize..).is_none() {
            return Err(Error::corrupt(format!(
                "page {} body offset is invalid",
                page.key
            )));
        }
    }
    let chunks = head.chunk_range(range.clone());
    if spans.len() != chunks.len() {
        return Err(Error::corrupt(format!(
            "page block {b} holds {} chunk spans, not {}",
            spans.len(),
            chunks.len()
        )));
    }
    for (i, &(s, e)) in chunks.zip(spans) {
        let page = &pages[head.chunks[i].page as usize - range.start];
        if s > e || page.text.get(s as usize..e as usize).is_none() {
            return Err(Error::corrupt(format!(
                "chunk {i} span {s}..{e} is outside its page"
            )));
        }
    }
    Ok(())
}

/// A whole load inflates its sections on up to this many threads, one for each this many
/// bytes of sections at least: a small blob is read on the calling thread. The tests load
/// every blob on all the cores.
#[cfg(not(test))]
const BYTES_PER_THREAD: usize = 1 << 20;
#[cfg(test)]
const BYTES_PER_THREAD: usize = 1;

/// Decodes a whole blob (`bytes` from its first byte to its last) into the index's data, before
/// the checks and derivations every load makes ([`crate::blob::decode`] goes on with them).
/// Each section is checked as [`decode_section`] checks it. The sections are cut into runs of
/// about equal bytes, a few for each core (page blocks cost more a byte than postings: a
/// thread done early takes another run), each run decoded on one thread and its page blocks
/// gathered into one list (the runs' lists then joined into the largest). An error is the one
/// of the first bad section in the blob's order, whatever the threads. The dictionary shards
/// are joined without copying their words, and the lexical index's look-up maps are left to
/// [`crate::blob::finish`] (made once).
///
/// With [`Keep::Checks`], the pages and the vectors' values are checked and dropped section by
/// section instead.
///
/// # Errors
/// [`Error::Corrupt`] for any part cut short, changed or inconsistent.
pub(crate) fn decode(bytes: &[u8], threads: usize, keep: Keep) -> Result<IndexData> {
    let mut head = decode_head(bytes)?;
    let parts = head.parts();
    let start = usize::try_from(head_end(bytes)?).unwrap_or(usize::MAX);
    let mut at = start;
    let mut bodies: Vec<&[u8]> = Vec::with_capacity(head.sections.len());
    for (i, s) in head.sections.iter().enumerate() {
        let end = at.saturating_add(s.len as usize);
        let Some(section) = bytes.get(at..end) else {
            return Err(Error::corrupt(format!(
                "truncated: section {i} ends past the last byte"
            )));
        };
        at = end;
        bodies.push(section);
    }
    if at != bytes.len() {
        return Err(Error::corrupt(format!(
            "{} trailing bytes after the last section",
            bytes.len() - at
        )));
    }
    let threads = threads.min((at - start) / BYTES_PER_THREAD).max(1);
    let sizes: Vec<usize> = bodies.iter().map(|b| b.len()).collect();
    let runs = if threads == 1 {
        1
    } else {
        threads * crate::data::parallel::RUNS_PER_THREAD
    };
    let jobs = runs_of(&sizes, runs);
    let decoded = crate::data::parallel::map(&jobs, threads, |job| {
        let mut out = Vec::new();
        // The run's page blocks go into lists of the size the head gives them.
        let ranges = job.clone().filter_map(|i| match parts[i] {
            Part::Pages(b) => Some(head.page_range(b)),
            _ => None,
        });
        let (n_pages, n_chunks) = ranges.fold((0, 0), |(p, c), r| {
            (p + r.len(), c + head.chunk_range(r).len())
        });
        let (mut pages, mut spans) = (Vec::with_capacity(n_pages), Vec::with_capacity(n_chunks));
        for i in job.clone() {
            let body = checked_body(&head, i, bodies[i])?;
            match (decode_part(&head, &head.pages, parts[i], i, body)?, keep) {
                (Loaded::Pages(mut p, mut s), Keep::Index) => {
                    pages.append(&mut p);
                    spans.append(&mut s);
                }
                // Checked against the head as they were decoded.
                (Loaded::Pages(..) | Loaded::Vectors(_), Keep::Checks) => {}
                (loaded, _) => out.push(loaded),
            }
        }
        if !pages.is_empty() {
            out.push(Loaded::Pages(pages, spans));
        }
        Ok::<_, Error>(out)
    });
    let mut shards: Vec<Dictionary> = Vec::with_capacity(head.dict_blocks.len());
    let mut postings: Vec<PostingBlock> = Vec::with_capacity(head.term_blocks.len());
    let mut blocks_of_positions: Vec<Vec<u8>> = Vec::with_capacity(head.term_blocks.len());
    let (mut pages, mut spans) = (Vec::new(), Vec::new());
    let (mut graph, mut raw, mut values) = (None, None, None);
    // The runs are in the blob's order and each stops at its first bad section: the first
    // error met is the blob's first.
    for job in decoded {
        for loaded in job? {
            match loaded {
                Loaded::Dictionary(d) => shards.push(d),
                Loaded::Postings(p) => postings.push(p),
                Loaded::Positions(p) => blocks_of_positions.push(p),
                Loaded::Pages(p, s) => {
                    pages.push(p);
                    spans.push(s);
                }
                Loaded::Graph(g) => graph = Some(g),
                Loaded::Raw(r) => raw = Some(r),
                Loaded::Vectors(v) => values = Some(v),
            }
        }
    }
    let (pages, spans) = match keep {
        Keep::Index => {
            let (pages, spans) = (concat(pages), concat(spans));
            // Each part is dropped once what it makes is made, not at the end: a whole load's
            // peak memory is that of the index it gives. The stubs stood in for the pages
            // until their blocks came.
            head.pages = Default::default();
            (pages, spans)
        }
        // The stubs stand for the pages (as many), whose spans the page blocks' checks read.
        Keep::Checks => (std::mem::take(&mut head.pages).into_pages(), Vec::new()),
    };
    let dictionary = if head.sharded() {
        Dictionary::concat(
            head.dictionary.lengths().to_vec(),
            head.n_terms as usize,
            &head.dict_firsts(),
            shards,
        )?
    } else {
        head.dictionary.clone()
    };
    let lexical = LexicalIndex::from_parts(dictionary, &head.term_blocks, &postings)?;
    drop(postings);
    let positions = if head.positions {
        let blocks: Vec<Option<&[u8]>> = blocks_of_positions.iter().map(|p| Some(&p[..])).collect();
        Some(Positions::from_parts(&lexical, &head.term_blocks, &blocks)?)
    } else {
        None
    };
    drop(blocks_of_positions);
    let vectors = match (head.vectors, values) {
        (Some(v), Some(values)) => Some(VectorSection { values, ..v }),
        _ => None,
    };
    let mut chunks = head.chunks;
    for (c, (start, end)) in chunks.iter_mut().zip(spans) {
        (c.start, c.end) = (start, end);
    }
    Ok(IndexData {
        config: head.config,
        languages: head.languages,
        pages,
        chunks,
        lexical,
        vectors,
        graph: graph.unwrap_or_default(),
        raw: Arc::new(raw.unwrap_or_default()),
        chunk_numbers: head.chunk_numbers,
        page_modified: head.page_modified,
        positions,
    })
}

/// `parts` one after another, in the largest part's allocation (grown in place where the
/// allocator can): only the other parts' items are moved.
fn concat<T>(mut parts: Vec<Vec<T>>) -> Vec<T> {
    let Some(largest) = (0..parts.len()).max_by_key(|&k| parts[k].len()) else {
        return Vec::new();
    };
    let total = parts.iter().map(Vec::len).sum::<usize>();
    let mut out = std::mem::take(&mut parts[largest]);
    out.reserve_exact(total - out.len());
    let before: Vec<T> = parts[..largest]
        .iter_mut()
        .flat_map(std::mem::take)
        .collect();
    out.splice(0..0, before);
    for part in &mut parts[largest + 1..] {
        out.append(part);
    }
    out
}

/// The sections of `sizes` bytes cut into `n` runs (fewer when there are fewer sections) of
/// about equal bytes, in order.
fn runs_of(sizes: &[usize], n: usize) -> Vec<std::ops::Range<usize>> {
    let total: usize = sizes.iter().sum();
    let mut runs = Vec::with_capacity(n);
    let (mut first, mut filled) = (0, 0);
    // In 128 bits: a 32-bit target's `usize` overflows at a few hundred megabytes times the runs.
    let share = |k: usize, of: usize| k as u128 * of as u128;
    for (k, size) in sizes.iter().enumerate() {
        filled += size;
        // The run ends once it holds its share of the bytes so far.
        if runs.len() + 1 < n && share(filled, n) >= share(total, runs.len() + 1) {
            runs.push(first..k + 1);
            first = k + 1;
        }
    }
    if first < sizes.len() || runs.is_empty() {
        runs.push(first..sizes.len());
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::super::encode::{assemble, deflate_fields, section};
    use super::super::fixtures::small;
    use super::super::Section;
    use super::*;
    use crate::{RangedIndex, SearchOptions};

    /// The blob with section `i`'s encoded bytes (before deflate) replaced by `raw`, and every
    /// hash and length made valid again: only the decoders' own checks stand between hostile
    /// content and a panic. `i == usize::MAX` replaces the head.
    fn with_raw(blob: &[u8], i: usize, raw: &[u8]) -> Vec<u8> {
        let mut head = decode_head(blob).unwrap();
        let mut bodies = bodies(blob);
        let body = miniz_oxide::deflate::compress_to_vec(raw, 1);
        let head_bytes = if i == usize::MAX {
            body
        } else {
            head.sections[i] = Section {
                len: (body.len() + TAG_LEN) as u32,
            };
            bodies[i] = body;
            section(&head).unwrap()
        };
        assemble(&head_bytes, &bodies)
    }

    /// The deflated bytes of each section of a blob, without their tags.
    fn bodies(blob: &[u8]) -> Vec<Vec<u8>> {
        let head = decode_head(blob).unwrap();
        let mut at = head_end(blob).unwrap() as usize;
        let mut out = Vec::new();
        for s in &head.sections {
            out.push(blob[at + TAG_LEN..at + s.len as usize].to_vec());
            at += s.len as usize;
        }
        out
    }

    /// Loads `blob` whole and in parts, searching and reading a page; errors are fine, a panic
    /// fails the test. A save's check refuses what the whole load refuses, with its error.
    fn exercise(blob: &[u8]) {
        let whole = crate::blob::decode(blob).map(|_| ());
        let error = |r: Result<()>| r.map_err(|e| e.to_string());
        assert_eq!(error(crate::blob::check(blob)), error(whole));
        let Ok(end) = head_end(blob) else { return };
        let Some(head) = blob.get(..end as usize) else {
            return;
        };
        let Ok(mut ranged) = RangedIndex::open(head) else {
            return;
        };
        // A head may list sections past the file's end (a range request would fail there).
        // Bytes refused load nothing.
        for [s, e] in ranged.missing() {
            if let Some(bytes) = blob.get(s as usize..e as usize) {
                let before = (ranged.missing(), ranged.loaded_bytes());
                if ranged.supply(s, bytes).is_err() {
                    assert_eq!((ranged.missing(), ranged.loaded_bytes()), before);
                }
            }
        }
        let opts = SearchOptions {
            facets: true,
            explain: true,
            ..Default::default()
        };
        for q in ["alpha \"beta gamma\"", "alphx", "delt"] {
            let _ = ranged.search(q, &opts);
        }
        let _ = ranged.page_record("a", None);
        let _ = ranged.into_index();
    }

    #[test]
    fn a_section_is_its_postcard_bytes_deflated_at_once_though_written_in_pieces() {
        // Bytes that do not compress, text that does, and numbers postcard writes one by one,
        // each longer than a piece.
        let noise = crate::blob::inflate::noise(7, 300_000);
        let text: String = (0..40_000).map(|i| format!("word{} ", i % 977)).collect();
        let value = (noise, text, (0..70_000u32).collect::<Vec<_>>());
        let raw = postcard::to_allocvec(&value).unwrap();
        let whole = miniz_oxide::deflate::compress_to_vec(&raw, 9);
        assert_eq!(section(&value).unwrap(), whole);
    }

    #[test]
    fn fields_deflated_apart_inflate_to_their_concatenation() {
        // Empty fields, small ones, and one larger than the first output buffer that does not
        // compress (pseudo-random bytes), so the buffer grows mid-field.
        let noise = crate::blob::inflate::noise(12345, 200_000);
        let cases: Vec<Vec<Vec<u8>>> = vec![
            vec![vec![]],
            vec![b"abc".to_vec()],
            vec![
                vec![],
                b"revenue revenue revenue".to_vec(),
                vec![],
                vec![7; 5000],
            ],
            vec![b"head".to_vec(), noise.clone(), vec![0; 100_000], noise],
        ];
        for fields in cases {
            let deflated = deflate_fields(&fields).unwrap();
            let inflated = miniz_oxide::inflate::decompress_to_vec(&deflated).unwrap();
            assert_eq!(inflated, fields.concat());
            assert_eq!(inflate(&deflated).unwrap(), fields.concat());
        }
        // Fields of every small length, so that the stream ends at every bit within a few
        // bytes of a flush: what a head of a small index is (its last fields a few bytes).
        let bytes = crate::blob::inflate::noise(99, 64);
        for kind in [&bytes[..], &[b'a'; 64][..]] {
            for a in 0..=24 {
                for b in 0..=12 {
                    for c in 0..=12 {
                        let fields = [kind[..a].to_vec(), kind[..b].to_vec(), kind[..c].to_vec()];
                        let deflated = deflate_fields(&fields).unwrap();
                        assert_eq!(inflate(&deflated).unwrap(), fields.concat(), "{a} {b} {c}");
                    }
                }
            }
        }
    }

    #[test]
    fn runs_hold_every_section_in_order_in_shares_of_about_equal_bytes() {
        let sizes = [10, 90, 5, 5, 40, 40, 1, 0, 30, 25];
        for n in 1..=12 {
            let runs = runs_of(&sizes, n);
            assert!(
                !runs.is_empty() && runs.len() <= n,
                "{n} runs: {}",
                runs.len()
            );
            let order: Vec<usize> = runs.iter().flat_map(Clone::clone).collect();
            assert_eq!(order, (0..sizes.len()).collect::<Vec<_>>());
        }
        // A run ends once the bytes so far reach its share of the 246: two runs cut after
        // 150 bytes, three after 100 and 190.
        let lens = |n| -> Vec<usize> { runs_of(&sizes, n).iter().map(|r| r.len()).collect() };
        assert_eq!(lens(2), [5, 5]);
        assert_eq!(lens(3), [2, 4, 4]);
        assert_eq!(runs_of(&[], 4).len(), 1);
    }

    #[test]
    fn lists_joined_into_the_largest_keep_their_order() {
        let lists = |lens: &[usize]| -> Vec<Vec<usize>> {
            let mut next = 0;
            lens.iter()
                .map(|&n| {
                    next += n;
                    (next - n..next).collect()
                })
                .collect()
        };
        for lens in [
            &[][..],
            &[0],
            &[3],
            &[2, 5],
            &[5, 2],
            &[1, 4, 2],
            &[0, 0, 3, 0],
            &[3, 3],
        ] {
            let total: usize = lens.iter().sum();
            assert_eq!(
                concat(lists(lens)),
                (0..total).collect::<Vec<_>>(),
                "{lens:?}"
            );
        }
    }

    #[test]
    fn a_whole_load_names_the_first_bad_section_whichever_thread_reads_it() {
        let blob = small();
        let head = decode_head(&blob).unwrap();
        let parts = head.parts();
        let n = head.sections.len();
        let page = parts
            .iter()
            .position(|p| matches!(p, Part::Pages(_)))
            .unwrap();
        assert!(0 < page && page + 1 < n, "pages between other sections");
        let mut starts = vec![head_end(&blob).unwrap() as usize];
        for s in &head.sections {
            starts.push(starts.last().unwrap() + s.len as usize);
        }
        // A byte changed in two sections, one of them a page block (read by its own thread):
        // the error names the first of the two in the blob.
        for (a, b) in [(1, page), (page, n - 1), (1, n - 1)] {
            let mut bad = blob.clone();
            bad[starts[a] + TAG_LEN] ^= 0x55;
            bad[starts[b] + TAG_LEN] ^= 0x55;
            let e = crate::blob::decode(&bad).unwrap_err();
            assert_eq!(e.code(), "corrupt_index");
            assert!(
                e.to_string().contains(&format!("section {a} checksum")),
                "{e}"
            );
        }
    }

    #[test]
    fn a_head_asking_for_billions_of_chunks_is_corrupt_before_any_allocation() {
        let blob = small();
        let mut head = decode_head(&blob).unwrap();
        head.chunk_counts[0] = u32::MAX;
        let bad = with_raw(&blob, usize::MAX, &postcard::to_allocvec(&head).unwrap());
        assert_eq!(decode_head(&bad).unwrap_err().code(), "corrupt_index");
        assert_eq!(
            crate::blob::decode(&bad).unwrap_err().code(),
            "corrupt_index"
        );
    }

    #[test]
    fn a_head_claiming_billions_of_terms_allocates_nothing_for_them_and_its_shards_are_corrupt() {
        let blob = small();
        let mut head = decode_head(&blob).unwrap();
        assert!(head.sharded());
        head.n_terms = u32::MAX;
        let bad = with_raw(&blob, usize::MAX, &postcard::to_allocvec(&head).unwrap());
        let end = head_end(&bad).unwrap() as usize;
        // In parts, the terms not loaded take nothing; the last shard holds fewer terms.
        let mut ranged = RangedIndex::open(&bad[..end]).unwrap();
        let missing = ranged.missing();
        let parts: Vec<(u64, &[u8])> = missing
            .iter()
            .map(|&[s, e]| (s, &bad[s as usize..e as usize]))
            .collect();
        assert_eq!(
            ranged.supply_many(&parts).unwrap_err().code(),
            "corrupt_index"
        );
        // Whole, the shards are here and hold fewer terms.
        assert_eq!(
            crate::blob::decode(&bad).unwrap_err().code(),
            "corrupt_index"
        );
    }

    #[test]
    fn hostile_parts_with_valid_hashes_are_errors_never_panics() {
        let blob = small();
        let end = head_end(&blob).unwrap() as usize;
        let mut raws: Vec<(usize, Vec<u8>)> = Vec::new();
        raws.push((
            usize::MAX,
            miniz_oxide::inflate::decompress_to_vec(&blob[HEADER_LEN..end]).unwrap(),
        ));
        for (i, body) in bodies(&blob).iter().enumerate() {
            raws.push((i, miniz_oxide::inflate::decompress_to_vec(body).unwrap()));
        }
        for (i, raw) in &raws {
            for cut in 0..raw.len() {
                exercise(&with_raw(&blob, *i, &raw[..cut]));
            }
            for at in 0..raw.len() {
                for flip in [0x01u8, 0x80, 0xff] {
                    let mut bad = raw.clone();
                    bad[at] ^= flip;
                    exercise(&with_raw(&blob, *i, &bad));
                }
            }
        }
    }

    #[test]
    fn a_section_of_another_head_is_refused_though_intact() {
        // The same sections after a head that differs in one setting (another version of the
        // blob on the server): each section's tag is keyed with the head it was written with.
        let blob = small();
        let mut head = decode_head(&blob).unwrap();
        head.config.max_query_chars += 1;
        let end = head_end(&blob).unwrap() as usize;
        let mut other = Vec::new();
        crate::blob::put_header(&mut other, &section(&head).unwrap());
        let other_end = other.len();
        other.extend_from_slice(&blob[end..]);
        let mut ranged = RangedIndex::open(&other[..other_end]).unwrap();
        for [s, e] in ranged.missing() {
            let err = ranged
                .supply(s, &other[s as usize..e as usize])
                .unwrap_err();
            assert_eq!(err.code(), "corrupt_index");
            assert!(err.to_string().contains("checksum mismatch"), "{err}");
        }
        assert_eq!(
            crate::blob::decode(&other).unwrap_err().code(),
            "corrupt_index"
        );
        // Keyed with its own head, the same bytes load.
        let retagged = assemble(&section(&head).unwrap(), &bodies(&blob));
        assert!(crate::blob::decode(&retagged).is_ok());
    }
}
