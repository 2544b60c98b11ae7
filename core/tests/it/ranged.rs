//! The blob's sections and the index read in parts from them (`RangedIndex`, issue 12's range
//! requests): a whole load gives the index back, and a search
//! in parts gives the answers of the whole index while loading only what it reads.

use std::path::Path;

use wikidex::{Config, Error, Index, IndexBuilder, Language, RangedIndex, Scope, SearchOptions};

fn example() -> Index {
    let mut b = IndexBuilder::new(Config::default()).unwrap();
    b.add_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/wiki"))
        .unwrap();
    b.build().unwrap().0
}

/// A wiki big enough for many blocks: 900 pages over a vocabulary of made-up words, with
/// tags, types, a user scope, `always` and `never` pages, and links.
fn big() -> Index {
    let syllables = [
        "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "ba",
    ];
    let word = |n: usize| -> String {
        let mut w = String::new();
        let mut n = n + 7;
        for _ in 0..3 {
            w.push_str(syllables[n % syllables.len()]);
            n /= syllables.len();
        }
        w
    };
    let mut b = IndexBuilder::new(Config::default()).unwrap();
    let mut files = Vec::new();
    for p in 0..900usize {
        let mut body = String::new();
        for s in 0..(3 + p % 7) {
            for w in 0..12 {
                body.push_str(&word((p * 31 + s * 17 + w * w * 3) % 1500));
                body.push(' ');
            }
            body.push_str(".\n\n");
        }
        let mode = match p % 97 {
            0 => "always",
            1 => "never",
            _ => "auto",
        };
        let text = format!(
            "---\ntitle: Page {p} {}\nsummary: About {}.\ntags: [t{}, common]\ntype: k{}\nusage_mode: {mode}\n---\n# Page {p}\n\n{body}See [[p{}]].\n",
            word(p),
            word(p + 1),
            p % 5,
            p % 3,
            (p + 1) % 900,
        );
        let path = if p % 50 == 7 {
            format!("user/ann/p{p}.md")
        } else {
            format!("global/p{p}.md")
        };
        files.push((path, text));
    }
    for (path, text) in &files {
        b.add_file(path, text.as_bytes()).unwrap();
    }
    b.build().unwrap().0
}

/// German, whose stemmer takes umlauts off (`äpfel` → `apfel`): a word and its term start
/// with different letters and lie in different dictionary shards.
fn german() -> Index {
    let vowels = ["ä", "ö", "ü", "a", "o", "u"];
    let syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "bl"];
    let word = |n: usize| -> String {
        let mut w = vowels[n % vowels.len()].to_string();
        let mut n = n / vowels.len() + 3;
        for _ in 0..3 {
            w.push_str(syllables[n % syllables.len()]);
            n /= syllables.len();
        }
        w
    };
    let config = Config {
        language: Some(Language::German),
        ..Config::default()
    };
    let mut b = IndexBuilder::new(config).unwrap();
    for p in 0..600usize {
        let body: Vec<String> = (0..30).map(|w| word((p * 37 + w * w * 5) % 3000)).collect();
        let text = format!("# Seite {p}\n\n{}\n", body.join(" "));
        b.add_file(&format!("s{p}.md"), text.as_bytes()).unwrap();
    }
    b.build().unwrap().0
}

const GERMAN_QUERIES: &[&str] = &[
    "äkalomi",
    "äkalomx",
    "ökalo",
    "akalomi",
    "ümine",
    "\"äkalomi äblkalo\"",
    "Äblkaru ÖSAVIzx",
    "äblkarx obl",
];

#[test]
fn a_ranged_search_answers_as_the_whole_index_where_the_stemmer_changes_first_letters() {
    let index = german();
    let blob = index.to_bytes().unwrap();
    let mut shared = open(&blob);
    let found = GERMAN_QUERIES
        .iter()
        .filter(|q| {
            !index
                .search(q, &Default::default())
                .unwrap()
                .hits
                .is_empty()
        })
        .count();
    assert!(found >= 5, "only {found} German queries find pages");
    for opts in option_sets() {
        for q in GERMAN_QUERIES {
            let want = index.search(q, &opts).unwrap();
            let (got, _, _) = search_fetching(&mut shared, &blob, q, &opts);
            assert_eq!(got, want, "{q:?} {opts:?}");
            let (got, rounds, _) = search_fetching(&mut open(&blob), &blob, q, &opts);
            assert_eq!(got, want, "{q:?} {opts:?} (fresh)");
            // The shards of its terms (and of the words its mistyped words start as, then of
            // their terms), postings, pages.
            assert!(rounds <= 5, "{q:?}: {rounds} rounds");
        }
    }
}

/// 25 one-edit neighbours of `xqezt`, the later in the alphabet the more pages hold it, in
/// blocks of their own: typo tolerance takes the most frequent neighbours, which a ranged
/// search can only know from the head's document frequencies.
fn typo_corpus() -> Index {
    let mut b = IndexBuilder::new(Config::default()).unwrap();
    for p in 0..200u32 {
        let mut text = format!("page{p} filler{} ", p % 13);
        for (i, c) in ('a'..='z').filter(|&c| c != 'e').enumerate() {
            if p % 26 <= i as u32 {
                text.push_str(&format!("xq{c}zt "));
            }
        }
        b.add_file(&format!("p{p}.md"), text.as_bytes()).unwrap();
    }
    b.build().unwrap().0
}

/// Snippets of chunks whose positions do not start at their text: a summary and tags around
/// every chunk, tables cut into chunks that each index the table's header before their rows,
/// and CJK text, whose tokens are overlapping bigrams. A whole index finds a snippet's
/// matches in its term positions, a ranged one (which has only its phrase terms' positions)
/// word by word: the two must highlight the same words, prefixes and typos included.
#[test]
fn snippets_from_term_positions_highlight_what_matching_each_word_does() {
    let mut b = IndexBuilder::new(Config::default()).unwrap();
    let mut table = String::from("| service | owner | notes |\n|---|---|---|\n");
    for r in 0..400 {
        table.push_str(&format!(
            "| svc{r} ingest | team {} | retries the nightly export, the batch {r} |\n",
            r % 7
        ));
    }
    let pages = [
        ("global/services.md", format!("---\ntitle: Service owners\nsummary: Who owns which service and the nightly export.\ntags: [ownership, nightly]\n---\n# Services\n\nThe table lists owners.\n\n{table}\nAfter the table, exports of the owners.\n")),
        ("global/nlp.md", "---\ntitle: 自然言語処理\nsummary: 自然言語の検索\n---\n# 自然言語処理\n\n自然言語処理は言語を扱う。検索エンジンは自然な文を読む。 The exporter exports nightly.\n".to_string()),
        ("global/export.md", "---\ntitle: The export\ntags: [export]\n---\nThe exporter exported the exports; an export runs nightly, and the owners own it.\n".to_string()),
    ];
    for (path, text) in &pages {
        b.add_file(path, text.as_bytes()).unwrap();
    }
    let index = b.build().unwrap().0;
    assert!(index.chunk_count() > 4, "the table is cut into chunks");
    let blob = index.to_bytes().unwrap();
    // Every matching chunk a hit, the table's continued chunks among them.
    let opts = SearchOptions {
        limit: Some(50),
        chunks: true,
        ..Default::default()
    };
    let queries = [
        "nightly export",
        "owners",
        "export ow",
        "svc12 ingest",
        "team 3 batch",
        "自然言語",
        "言語 検索",
        "自",
        "exprot nightly",
        "the",
        "owner ex",
        "batch 399 retries",
    ];
    let mut highlighted = 0;
    for q in queries {
        let want = index.search(q, &opts).unwrap();
        let (got, _, _) = search_fetching(&mut open(&blob), &blob, q, &opts);
        assert_eq!(got, want, "{q:?}");
        highlighted += want
            .hits
            .iter()
            .filter(|h| h.snippet.as_ref().is_some_and(|s| !s.highlights.is_empty()))
            .count();
    }
    assert!(highlighted > 100, "{highlighted} snippets with highlights");
}

/// Searches `ranged`, fetching from `blob` what each try says is missing; the results, the
/// number of tries that fetched, and the bytes fetched.
fn search_fetching(
    ranged: &mut RangedIndex,
    blob: &[u8],
    query: &str,
    opts: &SearchOptions,
) -> (wikidex::SearchResults, usize, u64) {
    let (results, rounds) = fetching_rounds(ranged, blob, query, opts);
    (results, rounds.len(), rounds.iter().sum())
}

/// [`search_fetching`] with the bytes each round fetched.
fn fetching_rounds(
    ranged: &mut RangedIndex,
    blob: &[u8],
    query: &str,
    opts: &SearchOptions,
) -> (wikidex::SearchResults, Vec<u64>) {
    let mut rounds = Vec::new();
    loop {
        match ranged.search(query, opts) {
            Err(Error::NotLoaded { ranges }) => {
                assert!(!ranges.is_empty());
                assert!(
                    rounds.len() < 5,
                    "{query}: still missing parts after 5 rounds"
                );
                rounds.push(ranges.iter().map(|[s, e]| e - s).sum());
                for [s, e] in ranges {
                    ranged.supply(s, &blob[s as usize..e as usize]).unwrap();
                }
            }
            Ok(r) => return (r, rounds),
            Err(e) => panic!("{query}: {e}"),
        }
    }
}

fn open(blob: &[u8]) -> RangedIndex {
    let end = RangedIndex::head_end(&blob[..56]).unwrap() as usize;
    RangedIndex::open(&blob[..end]).unwrap()
}

#[test]
fn a_blob_loads_as_the_index_it_was_written_from() {
    for index in [example(), big()] {
        let blob = index.to_bytes().unwrap();
        assert_eq!(blob[8..12], wikidex::blob::FORMAT_VERSION.to_le_bytes());
        assert_eq!(blob, index.to_bytes().unwrap(), "deterministic");
        let loaded = Index::from_bytes(&blob).unwrap();
        assert_eq!(loaded.to_bytes().unwrap(), blob);
        assert_eq!(loaded.pages(), index.pages());
    }
}

#[test]
fn vectors_survive_the_blob_whole_and_in_parts() {
    let index = example();
    let rows: Vec<Vec<f32>> = (0..index.chunk_count())
        .map(|c| {
            (0..4)
                .map(|d| ((c * 7 + d * 3) % 11) as f32 - 5.0)
                .collect()
        })
        .collect();
    let index = index
        .with_vectors("toy", "toy-1", &rows, wikidex::VectorEncoding::Int8)
        .unwrap();
    let blob = index.to_bytes().unwrap();
    let loaded = Index::from_bytes(&blob).unwrap();
    assert_eq!(loaded.to_bytes().unwrap(), index.to_bytes().unwrap());
    // A query vector makes a ranged search load the vectors, and rank as the whole index.
    let opts = SearchOptions {
        query_vector: Some(rows[3].clone()),
        ..Default::default()
    };
    let mut ranged = open(&blob);
    let (results, _, _) = search_fetching(&mut ranged, &blob, "nightly", &opts);
    assert_eq!(results, index.search("nightly", &opts).unwrap());
}

/// Queries that reach every path a search reads: plain words, stemmed words, typos, the word
/// being typed as a prefix, phrases, stopwords only, unknown words, CJK-free punctuation.
const QUERIES: &[&str] = &[
    "why did the nightly job crash",
    "who do I page for an outage",
    "PII in exports",
    "revenue",
    "incidnet",
    "nig",
    "\"net revenue\"",
    "\"memory leak\" crash",
    "the of and",
    "xqzvbnm plorkish",
    "",
    "kalomi",
    "kalo",
    "\"kalomi sato\"",
    "sazeru vibaqu",
    "page 12",
    "xqezt",
    "page1 xqfzt",
    "ka lo sazeru",
    "kal kalomx",
];

fn option_sets() -> Vec<SearchOptions> {
    vec![
        SearchOptions::default(),
        SearchOptions {
            explain: true,
            facets: true,
            limit: Some(5),
            ..Default::default()
        },
        SearchOptions {
            chunks: true,
            limit: Some(30),
            ..Default::default()
        },
        SearchOptions {
            tags: vec!["t1".into(), "metrics".into()],
            types: vec!["k2".into(), "reference".into()],
            ..Default::default()
        },
        SearchOptions {
            scope: Some(Scope::User("ann".into())),
            typos: false,
            ..Default::default()
        },
    ]
}

#[test]
fn a_ranged_search_answers_as_the_whole_index() {
    for index in [example(), big(), typo_corpus()] {
        let blob = index.to_bytes().unwrap();
        // One ranged index for every query (parts stay loaded), and a fresh one per query.
        let mut shared = open(&blob);
        for opts in option_sets() {
            for q in QUERIES {
                let want = index.search(q, &opts).unwrap();
                let (got, _, _) = search_fetching(&mut shared, &blob, q, &opts);
                assert_eq!(got, want, "{q:?} {opts:?}");
                let (got, _, _) = search_fetching(&mut open(&blob), &blob, q, &opts);
                assert_eq!(got, want, "{q:?} {opts:?} (fresh)");
            }
        }
    }
}

#[test]
fn parts_supplied_one_at_a_time_in_any_order_answer_as_the_whole_index() {
    // Every range a search reads, handed to a fresh index one at a time: the first (a
    // dictionary shard: shards lie first in the blob), then the rest from the last back (as
    // fetches may finish), so a phrase's positions come after their shard and before their
    // postings. The search then needs nothing more and answers as the whole index.
    for index in [example(), big()] {
        let blob = index.to_bytes().unwrap();
        let opts = SearchOptions::default();
        for q in QUERIES
            .iter()
            .chain(&["\"net revenue\" churn", "\"memory leak\""])
        {
            let want = index.search(q, &opts).unwrap();
            let mut reader = open(&blob);
            let mut ranges: Vec<[u64; 2]> = Vec::new();
            while let Err(Error::NotLoaded { ranges: more }) = reader.search(q, &opts) {
                for [s, e] in &more {
                    reader.supply(*s, &blob[*s as usize..*e as usize]).unwrap();
                }
                ranges.extend(more);
            }
            ranges.sort_unstable();
            if let Some(first) = ranges.first().copied() {
                ranges[1..].reverse();
                assert_eq!(ranges[0], first);
            }
            let mut ranged = open(&blob);
            for [s, e] in ranges {
                ranged.supply(s, &blob[s as usize..e as usize]).unwrap();
            }
            assert_eq!(ranged.search(q, &opts).unwrap(), want, "{q:?}");
        }
    }
}

#[test]
fn a_query_loads_a_small_part_of_a_big_blob() {
    let index = big();
    let blob = index.to_bytes().unwrap();
    let mut ranged = open(&blob);
    let head = ranged.loaded_bytes();
    assert!(
        head < blob.len() as u64 / 4,
        "head {head} of {}",
        blob.len()
    );
    let (results, rounds, fetched) =
        search_fetching(&mut ranged, &blob, "kalomi sazeru", &Default::default());
    assert!(!results.hits.is_empty());
    // One round for the dictionary shards of the query's words and the postings the head says
    // their terms are in, one for the pages the hits show.
    assert_eq!(rounds, 2);
    assert!(
        head + fetched < blob.len() as u64 / 2,
        "{} of {} bytes",
        head + fetched,
        blob.len()
    );
    assert_eq!(ranged.loaded_bytes(), head + fetched);
    // Asked again, it answers from what it has.
    let (_, rounds, fetched) =
        search_fetching(&mut ranged, &blob, "kalomi sazeru", &Default::default());
    assert_eq!((rounds, fetched), (0, 0));
}

#[test]
fn every_part_loaded_makes_the_whole_index() {
    let index = example();
    let blob = index.to_bytes().unwrap();
    let mut ranged = open(&blob);
    let opts = SearchOptions::default();
    let _ = search_fetching(&mut ranged, &blob, "revenue", &opts);
    let missing = ranged.missing();
    assert!(!missing.is_empty());
    for [s, e] in missing {
        ranged.supply(s, &blob[s as usize..e as usize]).unwrap();
    }
    assert!(ranged.missing().is_empty());
    assert_eq!(ranged.loaded_bytes(), blob.len() as u64);
    let rec = ranged.page_record("revenue", None).unwrap();
    assert_eq!(rec, index.page_record("revenue", None).unwrap());
    assert_eq!(
        ranged.page_ids(),
        index.pages().iter().map(|p| p.id()).collect::<Vec<_>>()
    );
    let whole = ranged.into_index().unwrap();
    assert_eq!(whole.to_bytes().unwrap(), index.to_bytes().unwrap());
}

/// The bytes each round of a search of `query` in a fresh ranged index fetches.
fn bytes_per_round(blob: &[u8], query: &str) -> Vec<u64> {
    fetching_rounds(&mut open(blob), blob, query, &Default::default()).1
}

#[test]
fn a_word_the_wiki_has_reads_its_own_shard_and_a_mistyped_one_those_of_its_first_letter() {
    let blob = big().to_bytes().unwrap();
    // `kalomi` is a word of the wiki; `kalomx` is one edit from it.
    let known = bytes_per_round(&blob, "kalomi");
    let typo = bytes_per_round(&blob, "kalomx");
    assert_eq!((known.len(), typo.len()), (2, 3), "{known:?} {typo:?}");
    // Both first read the shard of their term and the postings block it would be in; the typo
    // then reads the other shards of words starting with `k` (the postings of the terms it is
    // taken for are in that block: `kalomi`'s).
    assert_eq!(known[0], typo[0]);
    assert!(typo[1] > 0);
}

#[test]
fn a_page_record_asks_for_its_page_and_the_graph() {
    let index = example();
    let blob = index.to_bytes().unwrap();
    let mut ranged = open(&blob);
    let Err(Error::NotLoaded { ranges }) = ranged.page_record("revenue", None) else {
        panic!("a page record before its part is loaded");
    };
    for [s, e] in ranges {
        ranged.supply(s, &blob[s as usize..e as usize]).unwrap();
    }
    assert_eq!(
        ranged.page_record("revenue", None).unwrap(),
        index.page_record("revenue", None).unwrap()
    );
    assert_eq!(
        ranged.page_record("no_such_page", None).unwrap_err().code(),
        "unknown_page"
    );
}

/// A round's ranges handed over in one call (`supply_many`, as `ranged.js` does) answer as
/// handed over one by one; one bad range among them loads none of them.
#[test]
fn a_round_supplied_at_once_answers_as_range_by_range_and_a_bad_range_loads_nothing() {
    let index = big();
    let blob = index.to_bytes().unwrap();
    let opts = SearchOptions::default();
    let mut rounds_of_several = 0;
    for q in ["kalomi sazeru", "vibaqu \"kalomi sato\"", "sazerx"] {
        let want = index.search(q, &opts).unwrap();
        let mut ranged = open(&blob);
        let got = loop {
            match ranged.search(q, &opts) {
                Err(Error::NotLoaded { ranges }) => {
                    let parts: Vec<(u64, &[u8])> = ranges
                        .iter()
                        .map(|&[s, e]| (s, &blob[s as usize..e as usize]))
                        .collect();
                    if parts.len() > 1 {
                        rounds_of_several += 1;
                        // The last range changed: nothing of the round is loaded.
                        let before = ranged.loaded_bytes();
                        let mut bad = parts.clone();
                        let last = bad.len() - 1;
                        let mut changed = bad[last].1.to_vec();
                        changed[0] ^= 0x40;
                        bad[last].1 = &changed;
                        let err = ranged.supply_many(&bad).unwrap_err();
                        assert_eq!(err.code(), "corrupt_index");
                        assert_eq!(ranged.loaded_bytes(), before);
                    }
                    ranged.supply_many(&parts).unwrap();
                }
                other => break other.unwrap(),
            }
        };
        assert_eq!(got, want, "{q}");
    }
    assert!(rounds_of_several > 0, "no round named several ranges");
}

#[test]
fn bad_bytes_and_offsets_are_coded_errors_and_load_nothing() {
    let index = example();
    let blob = index.to_bytes().unwrap();
    let mut ranged = open(&blob);
    let Err(Error::NotLoaded { ranges }) = ranged.search("revenue", &Default::default()) else {
        panic!("nothing loaded yet");
    };
    let [s, e] = ranges[0];
    let (s, e) = (s as usize, e as usize);
    let before = ranged.loaded_bytes();
    // A changed byte, bytes of another place, a start that is no section's.
    let mut changed = blob[s..e].to_vec();
    changed[0] ^= 0x40;
    assert_eq!(
        ranged.supply(s as u64, &changed).unwrap_err().code(),
        "corrupt_index"
    );
    assert_eq!(
        ranged
            .supply(s as u64, &blob[s + 1..e + 1])
            .unwrap_err()
            .code(),
        "corrupt_index"
    );
    assert_eq!(
        ranged
            .supply(s as u64 + 1, &blob[s + 1..e])
            .unwrap_err()
            .code(),
        "invalid_argument"
    );
    assert_eq!(
        ranged.supply(s as u64, &blob[s..s + 1]).unwrap_err().code(),
        "invalid_argument"
    );
    assert_eq!(ranged.loaded_bytes(), before);
    // Another format version, foreign bytes, a cut head.
    let mut other = blob[..56].to_vec();
    other[8..12].copy_from_slice(&2u32.to_le_bytes());
    assert_eq!(
        RangedIndex::head_end(&other).unwrap_err().code(),
        "incompatible_format"
    );
    assert_eq!(
        RangedIndex::head_end(b"PK\x03\x04").unwrap_err().code(),
        "not_an_index"
    );
    assert_eq!(
        RangedIndex::head_end(&blob[..20]).unwrap_err().code(),
        "corrupt_index"
    );
    let end = RangedIndex::head_end(&blob[..56]).unwrap() as usize;
    assert_eq!(
        RangedIndex::open(&blob[..end - 1]).unwrap_err().code(),
        "corrupt_index"
    );
    let mut head = blob[..end].to_vec();
    head[end - 3] ^= 1;
    assert_eq!(
        RangedIndex::open(&head).unwrap_err().code(),
        "corrupt_index"
    );
}

#[test]
fn a_cut_or_changed_blob_is_an_error_never_a_panic() {
    let mut b = IndexBuilder::new(Config::default()).unwrap();
    b.add_file("a.md", b"---\ntags: [x]\n---\nalpha [[b]] beta")
        .unwrap();
    b.add_file("b.md", b"gamma \"delta\" alpha").unwrap();
    b.add_file("raw/r.md", b"raw text").unwrap();
    let blob = b.build().unwrap().0.to_bytes().unwrap();
    for cut in 0..blob.len() {
        assert!(Index::from_bytes(&blob[..cut]).is_err(), "cut at {cut}");
    }
    for at in 0..blob.len() {
        let mut changed = blob.clone();
        changed[at] ^= 0x21;
        // A byte of the header's reserved or length fields, the head's hash or a section:
        // caught by a check; never a panic.
        assert!(Index::from_bytes(&changed).is_err(), "byte {at} changed");
    }
}

#[test]
fn open_keeps_the_whole_sections_after_the_head_and_leaves_a_cut_one() {
    let index = big();
    let blob = index.to_bytes().unwrap();
    let head = RangedIndex::head_end(&blob).unwrap() as usize;
    let just_head = RangedIndex::open(&blob[..head]).unwrap();
    let mut prefix = RangedIndex::open(&blob[..head + 20_000]).unwrap();
    let kept = prefix.loaded_bytes() - just_head.loaded_bytes();
    assert!(kept > 0 && kept <= 20_000, "{kept}");
    assert!(prefix.missing().len() <= just_head.missing().len());
    // What it kept answers as the whole index.
    let q = "kalomi sazeru";
    let (got, _, _) = search_fetching(&mut prefix, &blob, q, &Default::default());
    assert_eq!(got, index.search(q, &Default::default()).unwrap());
    // The whole blob given at once is all loaded.
    assert!(RangedIndex::open(&blob).unwrap().missing().is_empty());
}

mod random_queries {
    use std::sync::OnceLock;

    use proptest::prelude::*;

    use super::*;

    /// `big()` and its blob, made once.
    fn shared() -> &'static (Index, Vec<u8>) {
        static BIG: OnceLock<(Index, Vec<u8>)> = OnceLock::new();
        BIG.get_or_init(|| {
            let index = big();
            let blob = index.to_bytes().unwrap();
            (index, blob)
        })
    }

    /// A word of `big()`'s kind: three of its syllables (or others), then cut short or with a
    /// letter changed, dropped or doubled: known words, mistyped ones, prefixes, unknown ones.
    fn word() -> impl Strategy<Value = String> {
        let syllable = prop::sample::select(vec![
            "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "ba", "xe", "ä",
        ]);
        (prop::collection::vec(syllable, 1..4), 0..5usize, 0..8usize).prop_map(|(s, edit, at)| {
            let mut w: Vec<char> = s.concat().chars().collect();
            let at = at % w.len();
            match edit {
                1 => w.truncate(at.max(1)),
                2 => w[at] = 'x',
                3 if w.len() > 1 => {
                    w.remove(at);
                }
                4 => w.insert(at, w[at]),
                _ => {}
            }
            w.into_iter().collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        /// Whatever shards, postings and pages a query makes a fresh ranged index load, the
        /// answers are the whole index's.
        #[test]
        fn a_ranged_search_of_any_words_answers_as_the_whole_index(
            words in prop::collection::vec(word(), 1..4),
            typos in any::<bool>(),
        ) {
            let (index, blob) = shared();
            let q = words.join(" ");
            let opts = SearchOptions { typos, ..Default::default() };
            let want = index.search(&q, &opts).unwrap();
            let (got, _, _) = search_fetching(&mut open(blob), blob, &q, &opts);
            prop_assert_eq!(got, want, "{:?}", q);
        }
    }
}
/// Every three-letter start of a word of `big()`, before another word: a word the wiki lacks
/// is matched as a prefix, and the terms it begins may lie in more than one dictionary shard.
#[test]
fn a_prefix_before_the_last_word_answers_as_the_whole_index() {
    let index = big();
    let blob = index.to_bytes().unwrap();
    let mut starts: Vec<String> = index
        .pages()
        .iter()
        .flat_map(|p| {
            p.text
                .split_whitespace()
                .map(|w| w.chars().take(3).collect::<String>())
        })
        .filter(|w| w.chars().count() == 3 && w.chars().all(char::is_alphabetic))
        .collect();
    starts.sort();
    starts.dedup();
    assert!(starts.len() > 50, "{}", starts.len());
    let opts = SearchOptions {
        limit: Some(100),
        typos: false,
        ..Default::default()
    };
    for p in starts {
        let q = format!("{p} sazeru");
        let want = index.search(&q, &opts).unwrap();
        let (got, _, _) = search_fetching(&mut open(&blob), &blob, &q, &opts);
        assert_eq!(got, want, "{q:?}");
    }
}

#[test]
fn a_file_read_in_parts_answers_as_the_whole_index_and_reads_only_what_it_needs() {
    let dir = crate::blob::temp_dir("ranged-file");
    let path = dir.join("big.wdx");
    let index = big();
    index.save(&path).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    let mut file = wikidex::file::RangedFile::open(&path).unwrap();
    for opts in option_sets() {
        for q in QUERIES {
            assert_eq!(
                file.search(q, &opts).unwrap(),
                index.search(q, &opts).unwrap(),
                "{q:?} {opts:?}"
            );
        }
    }
    assert!(
        file.index().loaded_bytes() < len,
        "{} of {len}",
        file.index().loaded_bytes()
    );
    // A save replaces the file by renaming: the reader stays on the blob it opened.
    let mut fresh = wikidex::file::RangedFile::open(&path).unwrap();
    example().save(&path).unwrap();
    let opts = SearchOptions::default();
    assert_eq!(
        fresh.search("kalomi sazeru", &opts).unwrap(),
        index.search("kalomi sazeru", &opts).unwrap()
    );
}

#[test]
fn a_chunk_read_in_parts_is_the_whole_index_chunk_and_reads_only_its_page() {
    let dir = crate::blob::temp_dir("ranged-chunk");
    let path = dir.join("example.wdx");
    let index = example();
    index.save(&path).unwrap();
    let mut ids: Vec<String> = index
        .pages()
        .iter()
        .flat_map(|p| index.page_record(&p.id(), None).unwrap().chunks)
        .map(|c| c.id)
        .collect();
    let raw: Vec<String> = (index.raw_documents().iter())
        .map(|d| format!("{}::chunk_0", d.id))
        .collect();
    assert!(!raw.is_empty() && ids.len() > index.pages().len());
    ids.extend(raw);
    let len = std::fs::metadata(&path).unwrap().len();
    for id in &ids {
        // Each from a fresh file: only the head, the raw layer and the id's page are read.
        let mut file = wikidex::file::RangedFile::open(&path).unwrap();
        assert_eq!(file.chunk(id).unwrap(), index.chunk(id).unwrap(), "{id}");
        assert!(file.index().loaded_bytes() < len, "{id}");
    }
    let mut file = wikidex::file::RangedFile::open(&path).unwrap();
    file.set_offset_unit(wikidex::OffsetUnit::Utf16);
    let session = wikidex::Session::open(&path).unwrap();
    session.set_offset_unit(wikidex::OffsetUnit::Utf16);
    for id in &ids {
        assert_eq!(file.chunk(id).unwrap(), session.chunk(id).unwrap(), "{id}");
    }
    for id in [
        "revenue::chunk_99",
        "no_such_page::chunk_0",
        "raw/nope::chunk_0",
        "revenue",
    ] {
        assert_eq!(
            file.chunk(id).unwrap_err().to_string(),
            index.chunk(id).unwrap_err().to_string(),
            "{id}"
        );
    }
}

#[test]
fn a_file_cut_short_or_grown_or_not_an_index_is_refused_when_opened() {
    let dir = crate::blob::temp_dir("ranged-file-bad");
    let path = dir.join("i.wdx");
    let blob = big().to_bytes().unwrap();
    let head = RangedIndex::head_end(&blob).unwrap() as usize;
    let open = |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        wikidex::file::RangedFile::open(&path).unwrap_err()
    };
    for bytes in [
        &blob[..blob.len() - 1],
        &blob[..head - 1],
        &blob[..head],
        &[&blob[..], b"x"].concat(),
    ] {
        assert_eq!(open(bytes).code(), "corrupt_index", "{} bytes", bytes.len());
    }
    assert_eq!(open(b"# a page, not an index\n").code(), "not_an_index");
    assert_eq!(
        wikidex::file::RangedFile::open(&dir).unwrap_err().code(),
        "invalid_argument"
    );
    assert_eq!(
        wikidex::file::RangedFile::open(&dir.join("missing.wdx"))
            .unwrap_err()
            .code(),
        "io"
    );
}

/// A toy model of four dimensions (a text's length and three letter counts), named `name`
/// (its fingerprint `{name}-1`), that counts the texts it embeds.
struct Letters {
    name: &'static str,
    fingerprint: String,
    embedded: std::sync::atomic::AtomicUsize,
}

impl Letters {
    fn new(name: &'static str) -> Letters {
        Letters {
            name,
            fingerprint: format!("{name}-1"),
            embedded: Default::default(),
        }
    }
}

impl wikidex::Embedder for Letters {
    fn model_id(&self) -> &str {
        self.name
    }
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
    fn dim(&self) -> usize {
        4
    }
    fn embed(&self, texts: &[&str]) -> wikidex::Result<Vec<Vec<f32>>> {
        self.embedded
            .fetch_add(texts.len(), std::sync::atomic::Ordering::Relaxed);
        Ok(texts.iter().map(|t| letters(t)).collect())
    }
}

fn letters(t: &str) -> Vec<f32> {
    let mut v: Vec<f32> = [t.len() % 17, t.matches('a').count(), t.matches('o').count()]
        .iter()
        .map(|&n| n as f32)
        .chain([1.0])
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

#[test]
fn a_file_read_in_parts_with_a_model_answers_as_a_session_and_embeds_each_query_once() {
    use std::sync::atomic::Ordering;
    use std::sync::Arc;
    let dir = crate::blob::temp_dir("ranged-file-model");
    let path = dir.join("vectors.wdx");
    let index = big();
    let rows: Vec<Vec<f32>> = (0..index.chunk_count())
        .map(|c| letters(&format!("chunk {c} {}", "a".repeat(c % 13))))
        .collect();
    index
        .with_vectors("letters", "letters-1", &rows, wikidex::VectorEncoding::Int8)
        .unwrap()
        .save(&path)
        .unwrap();
    let model = Arc::new(Letters::new("letters"));
    let session = wikidex::Session::open(&path).unwrap();
    session.set_model(Some(model.clone())).unwrap();

    // The other lanes alone read no vector and run no model.
    let mut file = wikidex::file::RangedFile::open(&path).unwrap();
    file.set_model(Some(model.clone())).unwrap();
    let lexical = SearchOptions {
        lanes: Some(vec![wikidex::Lane::Lexical, wikidex::Lane::Token]),
        ..Default::default()
    };
    let before = model.embedded.load(Ordering::Relaxed);
    assert_eq!(
        file.search("kalomi sazeru", &lexical).unwrap(),
        session.search("kalomi sazeru", &lexical).unwrap()
    );
    assert_eq!(model.embedded.load(Ordering::Relaxed), before);
    let without_vectors = file.index().loaded_bytes();

    let semantic = SearchOptions {
        lanes: Some(vec![wikidex::Lane::Semantic]),
        ..Default::default()
    };
    let mut sets = option_sets();
    sets.push(semantic);
    for opts in sets {
        for q in QUERIES {
            let want = session.search(q, &opts).unwrap();
            let before = model.embedded.load(Ordering::Relaxed);
            assert_eq!(file.search(q, &opts).unwrap(), want, "{q:?} {opts:?}");
            // A fresh file reads in rounds; its model still embeds the query once.
            let mut fresh = wikidex::file::RangedFile::open(&path).unwrap();
            fresh.set_model(Some(model.clone())).unwrap();
            assert_eq!(
                fresh.search(q, &opts).unwrap(),
                want,
                "{q:?} {opts:?} (fresh)"
            );
            let runs = model.embedded.load(Ordering::Relaxed) - before;
            assert!(
                runs <= 2,
                "{q:?} {opts:?}: the model ran {runs} times for two searches"
            );
        }
    }
    assert!(file.index().loaded_bytes() > without_vectors);
    assert!(file.index().loaded_bytes() < std::fs::metadata(&path).unwrap().len());

    // Another model's vectors are refused, as a session refuses them.
    let err = file
        .set_model(Some(Arc::new(Letters::new("other"))))
        .unwrap_err();
    assert_eq!(err.code(), "model_mismatch");
    assert_eq!(file.index().vectors_model_id(), Some("letters"));
}
