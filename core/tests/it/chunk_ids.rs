//! Chunk ids that survive edits (issue 14): an edit to a page keeps the id of every chunk
//! whose text it did not touch, through `upsert_page` and through a build on the previous
//! index (`IndexBuilder::previous`, `wikidex sync`); a build from scratch numbers chunks by
//! position, and older blobs load with those ids.

use std::collections::BTreeMap;

use wikidex::{ChunkConfig, Cited, Config, Index, IndexBuilder, TraverseOptions, WriteOptions};

/// Chunks of at most 16 tokens, no overlap: each paragraph below is a chunk of its own.
fn config() -> Config {
    Config {
        chunk: ChunkConfig {
            max_tokens: 16,
            overlap_tokens: 0,
        },
        ..Config::default()
    }
}

const P1: &str =
    "Pager duty starts at nine and the primary answers every page within five minutes.";
const P2: &str =
    "Escalate to the secondary when the primary has not acknowledged after ten minutes.";
const P3: &str = "Write the incident summary in the tracker before the end of the working day.";
const NEW: &str = "A new opening paragraph written at the top of the runbook later that week.";

fn page(paragraphs: &[&str]) -> String {
    format!("---\ntitle: Runbook\n---\n{}\n", paragraphs.join("\n\n"))
}

fn build(files: &[(&str, String)], previous: Option<&Index>) -> Index {
    let mut b = IndexBuilder::new(config()).unwrap();
    if let Some(p) = previous {
        b.previous(p);
    }
    for (path, text) in files {
        b.add_file(path, text.as_bytes()).unwrap();
    }
    b.build().unwrap().0
}

fn opts() -> WriteOptions {
    WriteOptions::default()
}

/// Chunk text → chunk id, for the page `runbook`.
fn ids(index: &Index) -> BTreeMap<String, String> {
    index
        .chunks_of("runbook", None)
        .unwrap()
        .into_iter()
        .map(|c| (c.text.trim().to_string(), c.id))
        .collect()
}

#[test]
fn issue_14_a_paragraph_added_at_the_top_keeps_every_other_chunk_id() {
    let index = build(&[("global/runbook.md", page(&[P1, P2, P3]))], None);
    let before = ids(&index);
    assert_eq!(before.len(), 3, "{before:?}");
    assert_eq!(before[P1], "runbook::chunk_0");
    assert_eq!(before[P3], "runbook::chunk_2");

    let (index, _) = index
        .upsert_page(
            "global/runbook.md",
            &page(&[NEW, P1, P2, P3]),
            &opts(),
            None,
        )
        .unwrap();
    let after = ids(&index);
    for p in [P1, P2, P3] {
        assert_eq!(after[p], before[p], "the id of {p:?} changed");
        // The old citation still names the same text.
        assert_eq!(index.chunk(&before[p]).unwrap().text.trim(), p);
    }
    assert_eq!(
        after[NEW], "runbook::chunk_3",
        "a new chunk takes a new number"
    );
    // Chunks stay in document order; `ordinal` is the position, the id keeps its number.
    let chunks = index.chunks_of("runbook", None).unwrap();
    let ordinals: Vec<u32> = chunks.iter().map(|c| c.ordinal).collect();
    assert_eq!(ordinals, [0, 1, 2, 3]);
    assert_eq!(chunks[0].text.trim(), NEW);
}

#[test]
fn a_citation_of_an_edited_chunk_is_drifted_and_one_of_an_untouched_chunk_still_verifies() {
    let index = build(&[("global/runbook.md", page(&[P1, P2, P3]))], None);
    let seen = index.chunks_of("runbook", None).unwrap();
    let edited = P2.replace("ten minutes", "fifteen minutes");
    let (index, _) = index
        .upsert_page(
            "global/runbook.md",
            &page(&[NEW, P1, &edited, P3]),
            &opts(),
            None,
        )
        .unwrap();
    // The edited paragraph keeps its id: the citation is not lost, its hash says it drifted.
    assert_eq!(index.chunk(&seen[1].id).unwrap().text.trim(), edited);
    let cite = |c: &wikidex::Chunk| Cited {
        id: c.id.clone(),
        hash: Some(c.hash.clone()),
    };
    let answer = "The primary answers within five minutes [runbook::chunk_0]; escalate after \
                  ten minutes [runbook::chunk_1].";
    let v = index
        .verify(answer, &[cite(&seen[0]), cite(&seen[1])], &[])
        .unwrap();
    let status: Vec<&str> = v.citations.iter().map(|c| c.status.name()).collect();
    assert_eq!(status[1], "drifted", "{v:?}");
    assert_ne!(status[0], "drifted", "{v:?}");
    assert_ne!(status[0], "unknown", "{v:?}");
}

#[test]
fn a_build_on_the_previous_index_keeps_chunk_ids_and_one_from_scratch_numbers_by_position() {
    let old = build(&[("global/runbook.md", page(&[P1, P2, P3]))], None);
    let files = [("global/runbook.md", page(&[NEW, P1, P2, P3]))];
    let synced = build(&files, Some(&old));
    assert_eq!(ids(&synced)[P1], "runbook::chunk_0");
    assert_eq!(ids(&synced)[NEW], "runbook::chunk_3");
    // The same edit through the write API gives the same index, byte for byte.
    let (upserted, _) = old
        .upsert_page("global/runbook.md", &files[0].1, &opts(), None)
        .unwrap();
    assert_eq!(synced.to_bytes().unwrap(), upserted.to_bytes().unwrap());
    // From scratch: positions, and the numbers round-trip through the blob.
    let fresh = build(&files, None);
    assert_eq!(ids(&fresh)[NEW], "runbook::chunk_0");
    assert_eq!(ids(&fresh)[P1], "runbook::chunk_1");
    let loaded = Index::from_bytes(&synced.to_bytes().unwrap()).unwrap();
    assert_eq!(ids(&loaded), ids(&synced));
    // Another page's edit leaves this page's numbers alone.
    let more = [
        files[0].clone(),
        ("global/other.md", "Another page.".to_string()),
    ];
    assert_eq!(ids(&build(&more, Some(&synced))), ids(&synced));
}

#[test]
fn a_relation_citing_a_kept_chunk_id_resolves_to_its_text_after_the_edit() {
    let citing = "---\nrelations:\n  - {target: runbook, type: cites, confidence: 0.9, chunk: \
                  \"runbook::chunk_2\"}\n---\nSummary of the runbook.";
    let index = build(
        &[
            ("global/runbook.md", page(&[P1, P2, P3])),
            ("global/summary.md", citing.to_string()),
        ],
        None,
    );
    let (index, _) = index
        .upsert_page(
            "global/runbook.md",
            &page(&[NEW, P1, P2, P3]),
            &opts(),
            None,
        )
        .unwrap();
    let graph = index
        .neighbors(&["summary"], &TraverseOptions::default())
        .unwrap();
    let edge = graph
        .edges
        .iter()
        .find(|e| e.kind == "cites")
        .expect("the relation");
    // P3 is now the fourth chunk of the page, and still `chunk_2`.
    assert_eq!(edge.chunk.as_deref(), Some("runbook::chunk_2"));
    assert_eq!(index.chunk("runbook::chunk_2").unwrap().text.trim(), P3);
    assert!(index.chunk("runbook::chunk_4").is_err());
}
