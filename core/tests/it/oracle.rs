#[test]
fn debug_dump() {
    use wikidex::*;
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.add_dir(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/wiki"))).unwrap();
    let (index, _) = b.build().unwrap();
    for limit in [5, 10, 20, 30] {
        let q = "why did the nightly job crash";
        let opts = SearchOptions { lanes: Some(vec![Lane::Token]), chunks: true, always: AlwaysMode::Separate, limit: Some(limit), ..Default::default() };
        let r = index.search(q, &opts).unwrap();
        println!("== limit {limit}");
        for h in &r.hits {
            let lx: Vec<String> = h.lanes.iter().map(|l| format!("{}:{:?}/{:?}", l.lane.name(), l.rank, l.score)).collect();
            println!("  {:.5} {} {}", h.score, h.chunk, lx.join(" "));
        }
    }
}
