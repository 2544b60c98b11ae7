//! A search's hits made when read (`Found`): a hit made without its snippet and the snippet
//! made apart give the hit `Found::hit` makes, in both lists and both `always` modes, in every
//! offset unit, from the index as it was searched.

use wikidex::{AlwaysMode, HitList, IndexBuilder, OffsetUnit, SearchOptions, Session};

fn session() -> Session {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    let files: [(&str, &str); 4] = [
        (
            "global/oncall.md",
            "---\ntitle: On-call\n---\nPage the on-call engineer for any outage of the nightly pipeline.",
        ),
        (
            "global/pipeline.md",
            "# Pipeline\n\nThe nightly pipeline — über-fast — restarts after an outage. 夜間のパイプライン.",
        ),
        (
            "global/rules.md",
            "---\ntitle: Rules\nusage_mode: always\n---\nNever page anyone about a pipeline outage at night.",
        ),
        ("global/other.md", "Unrelated text about revenue."),
    ];
    for (path, text) in files {
        b.add_file(path, text.as_bytes()).unwrap();
    }
    Session::new(b.build().unwrap().0)
}

#[test]
fn a_hit_without_its_snippet_and_the_snippet_apart_are_the_hit() {
    for unit in [OffsetUnit::Byte, OffsetUnit::Char, OffsetUnit::Utf16] {
        for always in [AlwaysMode::Separate, AlwaysMode::First] {
            let session = session();
            session.set_offset_unit(unit);
            let opts = SearchOptions {
                always,
                ..Default::default()
            };
            let found = session.find("nightly pipeline outage", &opts).unwrap();
            let whole = found.results();
            // A write after the search changes none of its hits.
            session
                .upsert_page("global/pipeline.md", "Gone.", &Default::default())
                .unwrap();
            for (list, want, len) in [
                (HitList::Hits, &whole.hits, found.hits_len()),
                (HitList::Always, &whole.always, found.always_len()),
            ] {
                assert_eq!(len, want.len(), "{unit:?} {always:?}");
                for (i, hit) in want.iter().enumerate() {
                    let mut made = found.hit_fields(list, i).unwrap();
                    assert_eq!(made.snippet, None);
                    made.snippet = found.snippet(list, i);
                    assert!(made.snippet.is_some());
                    assert_eq!(&made, hit, "{unit:?} {always:?} {list:?} {i}");
                }
                assert_eq!(found.hit_fields(list, want.len()), None);
                assert_eq!(found.snippet(list, want.len()), None);
            }
            let (hits, kept) = (whole.hits.len(), whole.always.len());
            match always {
                AlwaysMode::Separate => assert!(hits >= 2 && kept == 1),
                AlwaysMode::First => assert!(hits >= 3 && kept == 0),
            }
        }
    }
}

#[test]
fn a_search_without_snippets_makes_none_apart() {
    let opts = SearchOptions {
        snippets: false,
        ..Default::default()
    };
    let found = session().find("nightly pipeline", &opts).unwrap();
    assert!(found.hits_len() > 0);
    assert_eq!(found.snippet(HitList::Hits, 0), None);
    assert_eq!(found.hit_fields(HitList::Hits, 0), found.hit(0));
}
