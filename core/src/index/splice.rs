//! A write's next index made from this one in proportion to the pages it changes: only the
//! pages it puts in are cut and analyzed; every other page keeps its chunks, postings and
//! positions, taken from this index as they are. The data is what [`super::write::assemble`]
//! makes from the same pages (a test holds every write to that), so a write and a build
//! still give the same bytes.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use crate::blob::IndexData;
use crate::data::error::{Error, Result};
use crate::data::parallel;
use crate::data::record::LanguageMix;
use crate::graph::{GraphSection, GraphSplice, Names};
use crate::index::write::{analyze_chunks, slot, Analyzed, Change, Cuts, Shared};
use crate::index::Index;
use crate::lane::lexical::ChunkTerms;
use crate::lane::phrase::{Positions, Splicing};
use crate::postings::{LexicalIndex, Splice};
use crate::text::analyze::{BuildHash, Vocabulary};
use crate::text::chunk::PriorChunks;
use crate::text::page::Page;

impl Index {
    /// The index data of `pages`, this index's pages after `change`, with `languages` their
    /// mix: the pages put in are cut (their chunks numbered after the chunks of the page of the
    /// same id here, as a build does) and analyzed alone, then spliced in. Costs the analysis
    /// of the pages changed, a pass over the postings, positions, chunks and edges (the edges
    /// of the pages whose links the change may alter derived again); see
    /// [`Index::gone_words`] for the one check that may read further.
    pub(crate) fn spliced(
        &self,
        pages: Vec<Arc<Page>>,
        names: &Names,
        change: &Change,
        languages: LanguageMix,
    ) -> Result<IndexData> {
        let from = change.kept_from(self.data.pages.len(), pages.len())?;
        self.spliced_from(pages, names, change, &from, languages)
    }

    /// [`Index::spliced`] with the change's [`Change::kept_from`] at hand.
    pub(crate) fn spliced_from(
        &self,
        pages: Vec<Arc<Page>>,
        names: &Names,
        change: &Change,
        from: &[Option<usize>],
        languages: LanguageMix,
    ) -> Result<IndexData> {
        let old = &self.data;
        // The pages put in, cut and analyzed.
        let mut prior = PriorChunks::new();
        for &a in &change.added {
            if let Ok(j) = slot(&old.pages, &pages[a]) {
                prior.insert(pages[a].id(), self.numbered_chunks(j));
            }
        }
        let shared = Shared {
            config: &old.config,
            analyzer: &self.analyzer,
            pages: &pages,
            prior: &prior,
            cuts: &Cuts::new(),
        };
        let mut added = Analyzed::new();
        for &a in &change.added {
            shared.analyze_page(a, &pages[a], &mut added)?;
        }
        // The chunk table: each kept page's chunks, each added page's new ones, in page order.
        let total = old.chunks.len() + added.chunks.len();
        let (mut chunks, mut numbers) = (Vec::with_capacity(total), Vec::with_capacity(total));
        let mut kept_chunks = vec![u32::MAX; old.chunks.len()];
        let mut added_chunks = Vec::with_capacity(added.chunks.len());
        let mut positional = true;
        let mut new_chunks = std::mem::take(&mut added.chunks)
            .into_iter()
            .zip(std::mem::take(&mut added.numbers))
            .peekable();
        for (i, from) in (0u32..).zip(from) {
            let first = chunks.len();
            match *from {
                Some(j) => {
                    for c in self.first_chunk[j]..self.first_chunk[j + 1] {
                        kept_chunks[c as usize] = chunk_number(chunks.len())?;
                        let mut rec = old.chunks[c as usize];
                        rec.page = i;
                        chunks.push(rec);
                        numbers.push(self.chunk_number(c));
                    }
                }
                None => {
                    while let Some((rec, n)) = new_chunks.next_if(|(rec, _)| rec.page == i) {
                        added_chunks.push(chunk_number(chunks.len())?);
                        chunks.push(rec);
                        numbers.push(n);
                    }
                }
            }
            positional &= (numbers[first..].iter())
                .zip(0u32..)
                .all(|(&n, at)| n == at);
        }
        chunk_number(chunks.len())?;
        if positional {
            numbers.clear();
        }
        // The words of the text put in, and this index's surface words no text after holds.
        let words: Vec<(String, String)> = (added.vocabulary.words())
            .map(|(w, t)| (w.to_string(), t.to_string()))
            .collect();
        let gone = self.gone_words(change, &kept_chunks, &added.vocabulary);
        let (added_lexical, position) =
            LexicalIndex::build_numbered(added.terms.terms(), added.vocabulary);
        let added_positions = match (&old.positions, old.config.positions) {
            (Some(_), true) => Some(Positions::build(&added_lexical, &position, &added.terms)),
            (None, false) => None,
            _ => return Err(Error::corrupt("positions and their setting disagree")),
        };
        drop(added.terms);
        let mut positions = (old.positions.as_ref().zip(added_positions.as_ref()))
            .map(|(kept, added)| Splicing::new((kept, &old.lexical), (added, &added_lexical)));
        let splice = Splice {
            kept: &old.lexical,
            kept_chunks: &kept_chunks,
            added: &added_lexical,
            added_chunks: &added_chunks,
            chunks: chunks.len(),
            gone: &gone,
            words,
        };
        let lexical = LexicalIndex::spliced(splice, |source| {
            if let Some(positions) = &mut positions {
                positions.take(source);
            }
        });
        let positions = positions.map(Splicing::finish).transpose()?;
        let graph = GraphSection::spliced(&GraphSplice {
            old: &old.graph,
            old_pages: &old.pages,
            old_names: &self.names,
            pages: &pages,
            names,
            from,
            kept_chunks: &kept_chunks,
            chunks: &chunks,
            numbers: &numbers,
            raw: &old.raw,
        });
        Ok(IndexData {
            config: old.config.clone(),
            languages,
            pages,
            chunks,
            lexical,
            vectors: None,
            graph,
            raw: Arc::clone(&old.raw),
            chunk_numbers: numbers,
            page_modified: Vec::new(),
            positions,
        })
    }

    /// The surface words of this index that no page after `change` holds: words of the pages
    /// it takes out that neither the text put in (`added`) nor any kept page records. (Every
    /// page has a chunk, an empty one for an empty body, so a word a page records is held by
    /// its term's postings there.)
    ///
    /// A word is looked for in the first kept page whose chunks hold its term (where most
    /// words are found), then, if it is not there, in the term's other kept pages, each round
    /// in page order a batch of pages at a time over up to eight threads ([`Index::look_for`]).
    /// So a word only the removed pages held, of a term many pages hold, costs the analysis
    /// of those pages (a page read in both rounds counts twice), and a list of them; the
    /// analyses held at once are those of one batch.
    fn gone_words(
        &self,
        change: &Change,
        kept_chunks: &[u32],
        added: &Vocabulary,
    ) -> HashSet<String, BuildHash> {
        let threads = parallel::threads_for(change.removed.len(), PAGES_A_THREAD);
        let removed = parallel::map(&change.removed, threads, |&j| self.page_words(j));
        let lexical = &self.data.lexical;
        // The words to look for, each with the position of its term.
        let mut words: Vec<(String, usize)> = Vec::new();
        let mut seen: HashSet<&str, BuildHash> = HashSet::default();
        for (word, term) in removed.iter().flat_map(Vocabulary::words) {
            if added.has_word(word) || !seen.insert(word) {
                continue;
            }
            // A word whose term the index lacks is not one of its surface words.
            if let Some(t) = lexical.lookup(term) {
                words.push((word.to_string(), t));
            }
        }
        // The kept pages whose chunks hold term `t`, in order.
        let holders = |t: usize| {
            let chunks = lexical.postings_of(t).0.iter();
            let kept = chunks.filter(|&&c| kept_chunks[c as usize] != u32::MAX);
            let mut last = None;
            kept.map(|&c| self.chunk_page[c as usize] as usize)
                .filter(move |&p| last.replace(p) != Some(p))
        };
        // First in the first page that may hold each (where a word mostly is), then in the
        // others for the words not found there.
        let mut held = vec![false; words.len()];
        let firsts =
            (words.iter().enumerate()).filter_map(|(w, &(_, t))| Some((holders(t).next()?, w)));
        self.look_for(&words, firsts, &mut held);
        let rest: Vec<(usize, usize)> = (words.iter().enumerate())
            .filter(|(w, _)| !held[*w])
            .flat_map(|(w, &(_, t))| holders(t).skip(1).map(move |p| (p, w)))
            .collect();
        self.look_for(&words, rest, &mut held);
        (words.into_iter().zip(held))
            .filter(|(_, held)| !held)
            .map(|((word, _), _)| word)
            .collect()
    }

    /// Marks `held` each of `words` that one of its `(page, word)` pairs finds recorded there:
    /// the pages in order, [`GONE_BATCH`] at a time over up to eight threads (at least
    /// [`PAGES_A_THREAD`] pages a thread), each page analyzed once for
    /// all its words; it stops when every word is found.
    fn look_for(
        &self,
        words: &[(String, usize)],
        pairs: impl IntoIterator<Item = (usize, usize)>,
        held: &mut [bool],
    ) {
        let mut look: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (page, w) in pairs {
            look.entry(page).or_default().push(w);
        }
        let look: Vec<(usize, Vec<usize>)> = look.into_iter().collect();
        for batch in look.chunks(GONE_BATCH) {
            if held.iter().all(|&h| h) {
                break;
            }
            let todo: Vec<&(usize, Vec<usize>)> = (batch.iter())
                .filter(|(_, at)| at.iter().any(|&w| !held[w]))
                .collect();
            let threads = parallel::threads_for(todo.len(), PAGES_A_THREAD);
            let found = parallel::map(&todo, threads, |(page, at)| {
                let recorded = self.page_words(*page);
                (at.iter().copied())
                    .filter(|&w| recorded.has_word(&words[w].0))
                    .collect::<Vec<usize>>()
            });
            for w in found.into_iter().flatten() {
                held[w] = true;
            }
        }
    }

    /// The words page `j`'s analysis records: its fields' and its chunks' (as indexed).
    fn page_words(&self, j: usize) -> Vocabulary {
        let spans: Vec<(usize, usize)> = (self.page_chunks(j).iter())
            .map(|c| (c.start as usize, c.end as usize))
            .collect();
        let mut words = Vocabulary::default();
        let page = &self.data.pages[j];
        analyze_chunks(
            &self.analyzer,
            page,
            &spans,
            &mut words,
            &mut ChunkTerms::default(),
        );
        words
    }
}

/// Kept pages [`Index::gone_words`] analyzes at a time (on every core).
const GONE_BATCH: usize = 512;

/// Fewest pages a thread of [`Index::gone_words`] analyzes.
const PAGES_A_THREAD: usize = 64;

/// A chunk's position as the chunk table stores it.
fn chunk_number(at: usize) -> Result<u32> {
    u32::try_from(at).map_err(|_| Error::invalid_argument("more than 4 Gi chunks"))
}

#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;

    use super::*;
    use crate::data::config::Config;
    use crate::index::write::{assemble, WriteOptions};
    use crate::text::page::{self, Keys};

    /// Words whose forms share terms (`run`, `runs`, `runners`…), CJK, and forms that only
    /// one text holds, so that a write takes out words whose term other pages keep.
    const WORDS: &[&str] = &[
        "run",
        "runs",
        "running",
        "runner",
        "runners",
        "ran",
        "compute",
        "computer",
        "computing",
        "computation",
        "revenue",
        "revenues",
        "churn",
        "churned",
        "the",
        "of",
        "自然言語処理",
        "検索",
        "Café",
        "cafe",
    ];

    /// A small generator, so that the sequence of writes is the same on every run.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % n
        }
    }

    /// A page text: some words of [`WORDS`], a form of its own (`uniqN`, `uniqNs`), now and
    /// then a link, a table, or no body at all.
    fn text(rng: &mut Lcg, n: usize) -> String {
        let summary = format!(
            "{} {}",
            WORDS[rng.below(WORDS.len())],
            WORDS[rng.below(WORDS.len())]
        );
        let body = match rng.below(6) {
            0 => String::new(),
            1 => format!("| a | b |\n|---|---|\n| churn {n} | lost |\n| runners | ran |\n"),
            _ => {
                let mut words: Vec<String> = (0..rng.below(60))
                    .map(|_| WORDS[rng.below(WORDS.len())].to_string())
                    .collect();
                words.push(format!("uniq{n}{}", ["", "s", "ing"][rng.below(3)]));
                if rng.below(3) == 0 {
                    words.push(format!("[[page-{}]]", rng.below(12)));
                }
                words.join(" ")
            }
        };
        // Names and edges that writes make resolve elsewhere: refs, aliases, redirect
        // claims, relations naming another page's chunk.
        let mut front = format!("summary: {summary}\ntags: [t{}]\n", rng.below(3));
        if n.is_multiple_of(3) {
            front.push_str(&format!("updated: 2024-05-{:02}\n", 1 + n % 28));
        }
        let other = rng.below(12);
        match rng.below(5) {
            0 => front.push_str(&format!("refs: [page-{other}, alias-{}]\n", rng.below(6))),
            // Written as a title, normalized to `alias-N` when resolved.
            1 => front.push_str(&format!("aliases: [Alias {}]\n", rng.below(6))),
            2 => front.push_str(&format!("redirect_from: [page-{other}]\n")),
            3 => front.push_str(&format!(
                "relations:\n  - {{target: page-{other}, type: causes, chunk: page-{}::chunk_{}}}\n",
                rng.below(40),
                rng.below(3)
            )),
            _ => {}
        }
        format!("---\n{front}---\n{body}")
    }

    /// Chunks of 16 tokens at most, so that pages have several.
    fn config() -> Config {
        let mut config = Config::default();
        config.chunk.max_tokens = 16;
        config.chunk.overlap_tokens = 0;
        config
    }

    /// The data a build of `pages` makes with `config` and the chunk numbers of `prior`.
    fn assembled(config: &Config, prior: &PriorChunks, pages: &[Arc<Page>]) -> IndexData {
        let go = &mut |_, _| ControlFlow::Continue(());
        let languages = crate::text::language::mix(pages.iter().map(|p| &**p));
        let raw = crate::text::raw::RawSection::default();
        let pages = pages.to_vec();
        assemble(
            config.clone(),
            languages,
            pages,
            raw,
            prior,
            &Cuts::new(),
            go,
        )
        .unwrap()
    }

    #[test]
    fn every_write_makes_the_data_a_build_of_its_pages_makes() {
        let config = config();
        let mut rng = Lcg(7);
        let mut pages: Vec<Arc<Page>> = (0..10)
            .map(|i| {
                let path = format!("global/page-{i}.md");
                page::parse_with(&path, &text(&mut rng, i), Keys::FileName)
                    .unwrap()
                    .page
            })
            .map(Arc::new)
            .collect();
        crate::data::sort::sort_by(&mut pages, |a, b| {
            (&a.scope, &a.key).cmp(&(&b.scope, &b.key))
        });
        let mut index = Index::from_data(assembled(&config, &PriorChunks::new(), &pages));
        let opts = WriteOptions {
            allow_dangling: true,
        };
        let (mut gone, mut renamed) = (0, 0);
        // Writes whose graph had its texts put together in one part, only those it uses.
        let mut compacted = 0;
        for n in 10..200 {
            let keys: Vec<String> = index.pages().iter().map(|p| p.key.clone()).collect();
            let next = match rng.below(5) {
                0 | 1 if !keys.is_empty() => {
                    // A page edited: new text, or the old one with a word more or less.
                    let key = &keys[rng.below(keys.len())];
                    let old = index.page(key, None).unwrap().text.clone();
                    let text = match rng.below(3) {
                        0 => text(&mut rng, n),
                        1 => format!("{old} runners"),
                        _ => old.replacen("run", "", 1),
                    };
                    index
                        .upsert_page(&format!("global/{key}.md"), &text, &opts, None)
                        .unwrap()
                        .0
                }
                2 if keys.len() > 2 => {
                    gone += 1;
                    let key = &keys[rng.below(keys.len())];
                    index.delete_page(key, None, None).unwrap().0
                }
                3 if !keys.is_empty() => {
                    renamed += 1;
                    let key = &keys[rng.below(keys.len())];
                    let to = format!("moved-{n}");
                    index.rename_page(key, None, &to, None).unwrap().0
                }
                _ => {
                    let scope = ["global", "user/alice"][rng.below(2)];
                    let path = format!("{scope}/page-{}.md", rng.below(40));
                    index
                        .upsert_page(&path, &text(&mut rng, n), &opts, None)
                        .unwrap()
                        .0
                }
            };
            let built = assembled(&config, &index.prior_chunks(), next.pages());
            assert_eq!(next.data, built, "write {n}");
            next.data.lexical.assert_tables();
            assert_eq!(next.names(), &Names::new(next.pages()), "write {n}");
            let dates = Index::from_data(next.data.clone()).page_dates;
            assert_eq!(next.page_dates, dates, "write {n}");
            assert!(dates.iter().any(Option::is_some));
            let positions = next.data.positions.as_ref().unwrap();
            positions.checked(&next.data.lexical).unwrap();
            let (parts, only_used) = next.data.graph.text_parts();
            if parts < index.data.graph.text_parts().0 {
                assert!(only_used && parts == 1, "write {n}");
                compacted += 1;
            }
            index = next;
        }
        assert!(
            gone > 20 && renamed > 20 && compacted > 5,
            "{gone} deletes, {renamed} renames, {compacted} compactions"
        );
        assert!(index
            .data
            .lexical
            .typo_words()
            .iter()
            .any(|w| w == "runners"));
        // The writes met every kind of edge.
        let graph = &index.data.graph;
        let kinds: HashSet<&str> = (graph.edges.iter()).map(|e| graph.text(e.kind)).collect();
        for kind in ["ref", "link", "causes", "redirect"] {
            assert!(kinds.contains(kind), "{kinds:?}");
        }
    }

    #[test]
    fn many_changes_at_once_make_the_data_a_build_makes() {
        let config = config();
        let mut rng = Lcg(11);
        let scopes = ["global", "user/alice", "user/bob"];
        let new_page = |rng: &mut Lcg, n: usize| {
            let path = format!("{}/page-{}.md", scopes[rng.below(3)], rng.below(60));
            page::parse_with(&path, &text(rng, n), Keys::FileName)
                .unwrap()
                .page
        };
        let mut index = Index::from_data(assembled(&config, &PriorChunks::new(), &[]));
        let mut sizes = Vec::new();
        for step in 0..40 {
            // Some pages kept, some edited, some taken out; some new ones.
            let mut next: Vec<Arc<Page>> = Vec::new();
            for p in index.pages() {
                match rng.below(6) {
                    0 => {}
                    1 => {
                        let edited = text(&mut rng, step * 100 + 99);
                        next.push(Arc::new(
                            page::parse_with(&p.path, &edited, Keys::FileName)
                                .unwrap()
                                .page,
                        ));
                    }
                    _ => next.push(p.clone()),
                }
            }
            for k in 0..rng.below(12) {
                next.push(Arc::new(new_page(&mut rng, step * 100 + k)));
            }
            crate::data::sort::sort_by(&mut next, |a, b| {
                (&a.scope, &a.key).cmp(&(&b.scope, &b.key))
            });
            next.dedup_by(|a, b| (&a.scope, &a.key) == (&b.scope, &b.key));
            let change = Change::between(index.pages(), &next);
            sizes.push(change.removed.len() + change.added.len());
            let languages = crate::text::language::mix(next.iter().map(|p| &**p));
            let names = Names::new(&next);
            let data = (index.spliced(next.clone(), &names, &change, languages)).unwrap();
            assert_eq!(
                data,
                assembled(&config, &index.prior_chunks(), &next),
                "step {step}"
            );
            data.lexical.assert_tables();
            index = Index::from_data(data);
            // Writes start from loaded blobs too.
            if step % 4 == 3 {
                index = Index::from_bytes(&index.to_bytes().unwrap()).unwrap();
            }
        }
        assert!(sizes.iter().filter(|&&s| s > 5).count() > 20, "{sizes:?}");
    }
}
