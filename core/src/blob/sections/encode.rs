//! Writing a blob: the sections cut into blocks, each deflated, the head deflated a field at
//! a time, every section tagged with the head's hash.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Serialize;

use super::head::{chunks_of, gaps, stub, Head, Stubs};
use super::{tag, Section, BLOCK_BYTES, PAGE_BLOCK_BYTES, TAG_LEN};
use crate::blob::{IndexData, HEADER_LEN};
use crate::data::error::{Error, Result};
use crate::lane::semantic::VectorSection;
use crate::postings::{block_range, front_coded, Dictionary, LexicalIndex};
use crate::text::page::Page;

/// Cuts `0..n` into blocks of about `block` bytes by each item's size; the first item of each
/// block.
fn cut(n: usize, block: usize, size: impl Fn(usize) -> usize) -> Vec<u32> {
    let mut firsts = Vec::new();
    let mut filled = block;
    for i in 0..n {
        if filled >= block {
            firsts.push(i as u32);
            filled = 0;
        }
        filled += size(i);
    }
    firsts
}

/// The sections `make(0..n)` gives, in that order, made on every core (the blocks of pages,
/// of the dictionary, of postings and of positions): each is serialized and deflated on its
/// own, so the bytes do not depend on the threads. A block is about 2 KB, tens of
/// microseconds of work, so a thread takes at least [`BLOCKS_PER_THREAD`] of them.
fn made_apart(n: usize, make: impl Fn(usize) -> Result<Vec<u8>> + Sync) -> Result<Vec<Vec<u8>>> {
    let blocks: Vec<usize> = (0..n).collect();
    let threads = crate::data::parallel::threads_for(n, BLOCKS_PER_THREAD);
    crate::data::parallel::map(&blocks, threads, |&i| make(i))
        .into_iter()
        .collect()
}

/// Fewest blocks a thread of [`made_apart`] takes.
const BLOCKS_PER_THREAD: usize = 16;

fn encode_err(e: impl std::fmt::Display) -> Error {
    Error::Encode {
        detail: e.to_string(),
    }
}

/// Encodes `value` as a section: its postcard bytes deflated. The bytes are deflated as
/// postcard makes them, not laid out whole first, into a buffer as long as they are: a large
/// section (a million chunks' int8 vectors, 430 MB) is held once, deflated, beside the index,
/// not also as its postcard bytes and the copies of a growing buffer.
pub(super) fn section<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    let size = postcard::ser_flavors::Size::default();
    let len = postcard::serialize_with_flavor(value, size).map_err(encode_err)?;
    postcard::serialize_with_flavor(value, Deflater::new(len)).map_err(encode_err)
}

/// One deflate stream (level 9) written a piece at a time: bytes gathered into pieces of
/// [`Deflater::PIECE`] for the compressor, whose output goes into one buffer. Written in
/// pieces or at once, the same bytes deflate to the same stream. Also a postcard flavor
/// (its output the stream, finished).
struct Deflater {
    compressor: Box<miniz_oxide::deflate::core::CompressorOxide>,
    pending: Vec<u8>,
    out: Vec<u8>,
}

impl Deflater {
    const PIECE: usize = 1 << 16;

    /// A deflater for about `len` bytes: its buffer has room for them deflated however
    /// little they compress (stored blocks add 5 bytes to each 64 KiB at most).
    fn new(len: usize) -> Deflater {
        use miniz_oxide::deflate::core::{create_comp_flags_from_zip_params, CompressorOxide};
        Deflater {
            compressor: Box::new(CompressorOxide::new(create_comp_flags_from_zip_params(
                9, 0, 0,
            ))),
            pending: Vec::with_capacity(Deflater::PIECE.min(len)),
            out: Vec::with_capacity(len + len / 4096 + 64),
        }
    }

    fn write(&mut self, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            let room = Deflater::PIECE - self.pending.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.pending.extend_from_slice(now);
            bytes = later;
            if self.pending.len() == Deflater::PIECE {
                self.deflate(miniz_oxide::deflate::core::TDEFLFlush::None)?;
            }
        }
        Ok(())
    }

    /// Deflates the bytes pending, then flushes as `flush` says (`Full`: the next bytes start
    /// a block with codes of their own; `Finish`: the stream ends).
    fn deflate(&mut self, flush: miniz_oxide::deflate::core::TDEFLFlush) -> Result<()> {
        use miniz_oxide::deflate::core::{compress_to_output, TDEFLStatus};
        let out = &mut self.out;
        let (status, read) =
            compress_to_output(&mut self.compressor, &self.pending, flush, |bytes| {
                out.extend_from_slice(bytes);
                true
            });
        match status {
            TDEFLStatus::Okay | TDEFLStatus::Done if read == self.pending.len() => {
                self.pending.clear();
                Ok(())
            }
            _ => Err(encode_err("deflate stopped")),
        }
    }

    /// The stream, ended.
    fn finish(mut self) -> Result<Vec<u8>> {
        self.deflate(miniz_oxide::deflate::core::TDEFLFlush::Finish)?;
        self.out.shrink_to_fit();
        Ok(self.out)
    }
}

impl postcard::ser_flavors::Flavor for Deflater {
    type Output = Vec<u8>;

    fn try_push(&mut self, byte: u8) -> postcard::Result<()> {
        self.try_extend(&[byte])
    }

    fn try_extend(&mut self, bytes: &[u8]) -> postcard::Result<()> {
        // postcard's errors have no room for another cause; `section` reports it as encoding.
        self.write(bytes)
            .map_err(|_| postcard::Error::SerializeBufferFull)
    }

    fn finalize(self) -> postcard::Result<Vec<u8>> {
        self.finish()
            .map_err(|_| postcard::Error::SerializeBufferFull)
    }
}

/// Encodes an index as a blob. Same input, same bytes.
pub(crate) fn encode(data: &IndexData) -> Result<Vec<u8>> {
    Ok(encode_parts(Cow::Borrowed(data))?.assemble())
}

/// A blob's head and its sections' bodies, encoded and not yet laid one after another: the
/// index they came from can be dropped before [`Parts::assemble`] copies them into the blob.
pub(crate) struct Parts {
    head: Vec<u8>,
    bodies: Vec<Vec<u8>>,
}

impl Parts {
    /// The blob.
    pub(crate) fn assemble(self) -> Vec<u8> {
        assemble(&self.head, &self.bodies)
    }
}

/// [`encode`] up to the blob's parts. Given the index itself (`Cow::Owned`), its lexical index
/// and positions are dropped once their sections are made, so the sections made after them
/// are not held beside them too (at a million chunks, 0.57 GB less from then on).
pub(crate) fn encode_parts(mut data: Cow<'_, IndexData>) -> Result<Parts> {
    let mut bodies: Vec<Vec<u8>> = Vec::new();
    let mut sections: Vec<Section> = Vec::new();
    let mut push = |bytes: Vec<u8>| -> Result<()> {
        sections.push(Section {
            len: u32::try_from(bytes.len() + TAG_LEN)
                .map_err(|_| encode_err("a section over 4 GiB"))?,
        });
        bodies.push(bytes);
        Ok(())
    };
    let lexical = lexical_sections(&data, &mut push)?;
    if let Cow::Owned(owned) = &mut data {
        owned.lexical = LexicalIndex::default();
        owned.positions = None;
    }
    let data = &*data;
    let page_blocks = cut(data.pages.len(), PAGE_BLOCK_BYTES, |p| {
        let page = &data.pages[p];
        page.text.len() + page.title.len() + 64
    });
    let page_sections = made_apart(page_blocks.len(), |i| {
        let pages = block_range(&page_blocks, i, data.pages.len());
        let spans: Vec<(u32, u32)> = data.chunks[chunks_of(&data.chunks, pages.clone())]
            .iter()
            .map(|c| (c.start, c.end))
            .collect();
        section(&(&data.pages[pages], spans))
    })?;
    page_sections.into_iter().try_for_each(&mut push)?;
    push(section(&data.raw)?)?;
    push(section(&data.graph)?)?;
    if let Some(v) = &data.vectors {
        push(section(&v.values)?)?;
    }
    let head = Head {
        config: data.config.clone(),
        languages: data.languages.clone(),
        // Made from the pages by `encode_head`.
        pages: Stubs::default(),
        chunk_counts: {
            let mut counts = vec![0u32; data.pages.len()];
            for c in &data.chunks {
                counts[c.page as usize] += 1;
            }
            counts
        },
        chunks: Vec::new(),
        chunk_numbers: data.chunk_numbers.clone(),
        page_modified: data.page_modified.clone(),
        dictionary: lexical.lengths,
        vectors: data.vectors.as_ref().map(VectorSection::without_rows),
        positions: lexical.positions,
        term_blocks: lexical.term_blocks,
        page_blocks,
        sections,
        n_terms: lexical.n_terms,
        block_bounds: lexical.block_bounds,
        dict_blocks: lexical.dict_blocks,
        dict_bounds: lexical.dict_bounds,
        key: [0; 32],
    };
    Ok(Parts {
        head: encode_head(&head, &data.pages)?,
        bodies,
    })
}

/// What the head says of the lexical sections.
struct LexicalHead {
    n_terms: u32,
    positions: bool,
    /// The dictionary's chunk lengths, without its terms (those are in the shards).
    lengths: Dictionary,
    term_blocks: Vec<u32>,
    block_bounds: Vec<String>,
    dict_blocks: Vec<u32>,
    dict_bounds: Vec<String>,
}

/// Makes the lexical sections (the dictionary shards, each some whole blocks of postings, the
/// posting blocks, the position blocks) and hands each to `push`, in the blob's order.
fn lexical_sections(
    data: &IndexData,
    push: &mut dyn FnMut(Vec<u8>) -> Result<()>,
) -> Result<LexicalHead> {
    let lexical = &data.lexical;
    let n_terms = lexical.term_count();
    let positions = data.positions.as_ref();
    let term_blocks = cut(n_terms, BLOCK_BYTES, |t| {
        // About two bytes a posting for its gap and frequency, and as many for positions.
        let df = lexical.df(t);
        8 + 2 * df + positions.map_or(0, |_| 2 * df)
    });
    let terms_of = |i: usize| block_range(&term_blocks, i, n_terms);
    let dictionary = lexical.dictionary();
    let (terms, others) = (dictionary.terms(), dictionary.other_words());
    // Each other surface word goes with the shard of the last term at or before it.
    let word_block = |w: &str| {
        let t = terms.partition_point(|t| t <= w).saturating_sub(1);
        term_blocks
            .partition_point(|&f| f as usize <= t)
            .saturating_sub(1)
    };
    let mut block_bytes: Vec<usize> = (0..term_blocks.len())
        .map(|b| terms_of(b).map(|t| terms[t].len() + 4).sum())
        .collect();
    for w in others.iter() {
        if let Some(size) = block_bytes.get_mut(word_block(w)) {
            *size += w.len() + 4;
        }
    }
    let dict_blocks = cut(term_blocks.len(), BLOCK_BYTES, |b| block_bytes[b]);
    let block_bounds: Vec<String> = term_blocks
        .iter()
        .map(|&f| terms[f as usize].to_string())
        .collect();
    let dict_bounds: Vec<String> = dict_blocks
        .iter()
        .map(|&b| block_bounds[b as usize].clone())
        .collect();
    let shards = made_apart(dict_blocks.len(), |j| {
        let blocks = block_range(&dict_blocks, j, term_blocks.len());
        let first = terms_of(blocks.start).start;
        let last = blocks.end.checked_sub(1).map_or(first, |b| terms_of(b).end);
        let words_from = |j: usize| match j {
            0 => 0,
            j => dict_bounds
                .get(j)
                .map_or(others.len(), |b| others.partition_point(|w| w < b.as_str())),
        };
        section(&dictionary.shard(first..last, words_from(j)..words_from(j + 1)))
    })?;
    let postings = made_apart(term_blocks.len(), |i| {
        section(&lexical.posting_block(terms_of(i)))
    })?;
    shards
        .into_iter()
        .chain(postings)
        .try_for_each(&mut *push)?;
    if let Some(p) = positions {
        made_apart(term_blocks.len(), |i| section(&p.block(terms_of(i))))?
            .into_iter()
            .try_for_each(&mut *push)?;
    }
    Ok(LexicalHead {
        n_terms: u32::try_from(n_terms).map_err(|_| encode_err("over 4 billion terms"))?,
        positions: positions.is_some(),
        lengths: dictionary.lengths_only(),
        term_blocks,
        block_bounds,
        dict_blocks,
        dict_bounds,
    })
}

/// Encodes the head: its postcard bytes, deflated a field at a time, each field in deflate
/// blocks of its own with their own codes (CACM's head deflates to 7.9 KB rather than 9.0 as
/// one run, whose blocks mixed the page stubs, the chunk lengths and the list of sections; as
/// little as zopfli's 7.5 KB, at no cost in time). It inflates as one stream, to the postcard
/// bytes of `head`, so a reader sees no difference.
fn encode_head(head: &Head, pages: &[Arc<Page>]) -> Result<Vec<u8>> {
    #[derive(Serialize)]
    struct Gaps<'a>(#[serde(with = "gaps")] &'a Vec<u32>);
    #[derive(Serialize)]
    struct FrontCoded<'a>(#[serde(with = "front_coded")] &'a Vec<String>);
    fn field<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
        postcard::to_allocvec(value).map_err(encode_err)
    }
    // Every field, in order (a field added to `Head` is a compile error here until it is
    // listed, with the encoding its attribute gives it).
    let Head {
        config,
        languages,
        pages: _,
        chunk_counts,
        chunks: _,
        chunk_numbers,
        page_modified,
        dictionary,
        vectors,
        positions,
        term_blocks,
        page_blocks,
        sections,
        n_terms,
        dict_blocks,
        block_bounds,
        dict_bounds: _,
        key: _,
    } = head;
    let stubs = Stubs::of(pages.iter().map(|p| stub(p)));
    let fields = [
        field(config)?,
        field(languages)?,
        field(&stubs)?,
        field(chunk_counts)?,
        field(chunk_numbers)?,
        field(page_modified)?,
        field(dictionary)?,
        field(vectors)?,
        field(positions)?,
        field(&Gaps(term_blocks))?,
        field(&Gaps(page_blocks))?,
        field(sections)?,
        field(n_terms)?,
        field(&Gaps(dict_blocks))?,
        field(&FrontCoded(block_bounds))?,
    ];
    // The fields one after another are the head's encoding (each field's own attribute is
    // copied above); checked in debug builds, the tests'.
    debug_assert!(field(&Head {
        pages: stubs.clone(),
        ..head.clone()
    })
    .is_ok_and(|whole| whole == fields.concat()));
    deflate_fields(&fields)
}

/// One deflate stream of `fields` one after another, a full flush after each: each field
/// starts a new block, with codes of its own. Empty fields are left out (a head's fields are
/// never empty): a flush then an empty final block is a stream zune-inflate refuses (see
/// [`crate::blob::inflate`]).
pub(super) fn deflate_fields(fields: &[Vec<u8>]) -> Result<Vec<u8>> {
    use miniz_oxide::deflate::core::TDEFLFlush;
    let mut deflater = Deflater::new(fields.iter().map(Vec::len).sum());
    let fields: Vec<&Vec<u8>> = fields.iter().filter(|f| !f.is_empty()).collect();
    let Some((last, before)) = fields.split_last() else {
        return deflater.finish();
    };
    for field in before {
        deflater.write(field)?;
        deflater.deflate(TDEFLFlush::Full)?;
    }
    deflater.write(last)?;
    deflater.finish()
}

/// A blob: the header, the head, then each section's tag (keyed with the head's hash) and its
/// bytes.
pub(super) fn assemble(head_bytes: &[u8], bodies: &[Vec<u8>]) -> Vec<u8> {
    let key = *blake3::hash(head_bytes).as_bytes();
    let mut out = Vec::with_capacity(
        HEADER_LEN + head_bytes.len() + bodies.iter().map(|b| b.len() + TAG_LEN).sum::<usize>(),
    );
    crate::blob::put_header(&mut out, head_bytes);
    for b in bodies {
        out.extend_from_slice(&tag(&key, b));
        out.extend_from_slice(b);
    }
    out
}
