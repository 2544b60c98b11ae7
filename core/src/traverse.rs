//! Walking the page graph of a snapshot ([`crate::graph`] builds it): resolving keys, the
//! edges into and out of a page, a chunk's pointers, neighborhoods to a depth with the
//! evidence of each edge, and a search expanded along the graph.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::data::error::{Error, Result};
use crate::embed::Embedder;
use crate::graph::{
    is_relation, ChunkRef, EdgeRecord, Target, MAX_DEPTH, MAX_HOPS, MAX_NODES, MAX_POINTERS,
};
use crate::index::{Caller, Index};
use crate::search::{AlwaysMode, Found, SearchOptions};
use crate::text::page::{self, Page, Scope, UsageMode};

/// One edge as the public API returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphEdge {
    /// Id of the source page.
    pub from: String,
    /// Id of the target page; for an external edge its name, for a missing target the key.
    pub to: String,
    /// `page`, `external` or `missing`.
    pub target: String,
    /// `ref`, `link`, `redirect`, `sl_ref` or the relation's type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Confidence in `0.0..=1.0` (1.0 for refs, links, redirects and external names).
    pub confidence: f32,
    /// The key as the source page wrote it.
    pub written: String,
    /// Supporting text: the relation's evidence, or the sentence that links the target.
    pub evidence: Option<String>,
    /// The chunk where the evidence is (a wiki or raw chunk id), when known.
    pub chunk: Option<String>,
}

/// A raw chunk a page was compiled from (see [`Index::pointers`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pointer {
    /// The chunk id.
    pub chunk: String,
    /// The weight from `sources`.
    pub weight: f32,
    /// The chunk's current content hash.
    pub hash: String,
}

/// Traversal settings (see [`Index::neighbors`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TraverseOptions {
    /// How many edges away from a seed to go: 0, 1 or 2 (default 2).
    pub depth: u32,
    /// Only follow connections at least this confident, `0.0..=1.0` (default 0.0: all).
    pub min_confidence: f32,
    /// Most nodes returned, seeds included, `1..=1000` (default 50).
    pub max_nodes: usize,
    /// Resolve seed keys as this scope (default: global first, then any user scope).
    pub scope: Option<Scope>,
}

impl Default for TraverseOptions {
    fn default() -> Self {
        TraverseOptions {
            depth: MAX_DEPTH,
            min_confidence: 0.0,
            max_nodes: 50,
            scope: None,
        }
    }
}

/// A node of a traversal's subgraph, with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphNode {
    /// The page id.
    pub id: String,
    /// Its key.
    pub key: String,
    /// Its title.
    pub title: String,
    /// Its summary.
    pub summary: Option<String>,
    /// The page's file, relative to the wiki root.
    pub path: String,
    /// 0 for a seed, else the number of edges from the nearest seed.
    pub depth: u32,
    /// Product of connection confidences along the best path from a seed (1.0 for a seed).
    pub confidence: f32,
    /// The node it was reached from (`None` for a seed).
    pub via: Option<String>,
    /// Stale since this date, if marked stale.
    pub stale_since: Option<String>,
    /// The raw chunks the page was compiled from (see [`Index::pointers`]).
    pub sources: Vec<Pointer>,
    /// Named external sources of the page (`sl_refs`).
    pub external: Vec<String>,
}

/// What [`Index::neighbors`] returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subgraph {
    /// Seed page ids, in the order given (unknown and duplicate seeds removed).
    pub seeds: Vec<String>,
    /// Seeds that name no page.
    pub unknown_seeds: Vec<String>,
    /// Nodes: seeds, then depth 1, then depth 2; within a depth by confidence, then key.
    pub nodes: Vec<GraphNode>,
    /// Every edge between two returned nodes whose connection meets the minimum confidence,
    /// by source node order.
    pub edges: Vec<GraphEdge>,
    /// One line per non-seed node: its best path from a seed, by title
    /// (`A --[causes]--> B --[feeds]--> C`).
    pub chain: Vec<String>,
    /// Nodes were left out to stay within `max_nodes`.
    pub truncated: bool,
}

/// Settings of [`Index::query_with_evidence`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvidenceOptions {
    /// How many top pages of the search become seeds, `1..=20` (default 3).
    pub seeds: usize,
    /// The traversal from the seeds.
    pub traverse: TraverseOptions,
}

impl Default for EvidenceOptions {
    fn default() -> Self {
        EvidenceOptions {
            seeds: 3,
            traverse: TraverseOptions::default(),
        }
    }
}

/// A chunk that supports an evidence subgraph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SupportingChunk {
    /// The chunk id.
    pub id: String,
    /// Why it is here: `hit` (a seed's best chunk), `edge` (holds an edge's evidence) or
    /// `source` (a node's raw source pointer).
    pub why: String,
    /// Its content hash.
    pub hash: String,
    /// Its text.
    pub text: String,
}

/// What [`Index::query_with_evidence`] returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The query.
    pub query: String,
    /// The subgraph around the top pages (empty when the search found nothing).
    pub graph: Subgraph,
    /// Supporting chunks, each once: hits first, then edge evidence, then source pointers.
    pub chunks: Vec<SupportingChunk>,
}

impl Index {
    /// Resolves `key` the way a link on a page in `scope` would (redirects, then the key, then
    /// aliases; see the [module docs](crate::graph)); `None` for the scope looks in the global
    /// scope, then in any user scope. `Ok(None)`: no page has this name.
    ///
    /// # Errors
    /// [`Error::InvalidPage`] (naming the page that claims `key`) when `key` reaches a page
    /// only through more than [`MAX_HOPS`] redirects: the chain is not followed to its end.
    pub fn resolve(&self, key: &str, scope: Option<&Scope>) -> Result<Option<&Page>> {
        let normalized = page::normalize_key(key);
        let from = scope.cloned().unwrap_or(Scope::Global);
        let r = self.names().resolve(self.pages(), &from, &normalized);
        if r.too_long && r.page.is_none() {
            let claimer = self
                .names()
                .redirect(&from, &normalized)
                .map_or_else(String::new, |q| self.pages()[q as usize].path.clone());
            return Err(Error::InvalidPage {
                path: claimer,
                line: None,
                reason: format!(
                    "`{normalized}` reaches a page only through more than {MAX_HOPS} redirects"
                ),
            });
        }
        Ok(match r.page {
            Some(p) => Some(&self.pages()[p as usize]),
            None => self.page(key, scope).ok(),
        })
    }

    /// The outgoing edges of page `key` (forward adjacency), in stored order.
    ///
    /// # Errors
    /// [`Error::UnknownPage`].
    pub fn edges_from(&self, key: &str, scope: Option<&Scope>) -> Result<Vec<GraphEdge>> {
        let p = self.page_position(key, scope)?;
        Ok(self
            .out_edges(p)
            .iter()
            .map(|e| self.public_edge(e))
            .collect())
    }

    /// The edges that reach page `key` (backward adjacency), by source page.
    ///
    /// # Errors
    /// [`Error::UnknownPage`].
    pub fn edges_to(&self, key: &str, scope: Option<&Scope>) -> Result<Vec<GraphEdge>> {
        let p = self.page_position(key, scope)?;
        Ok(self.in_edges(p).map(|e| self.public_edge(e)).collect())
    }

    /// The raw chunks page `key` was compiled from (its `sources`): at most
    /// [`MAX_POINTERS`], by weight (highest first), then chunk id. Ids that name no chunk are
    /// left out (lint reports them as `unknown_source`).
    ///
    /// # Errors
    /// [`Error::UnknownPage`].
    pub fn pointers(&self, key: &str, scope: Option<&Scope>) -> Result<Vec<Pointer>> {
        let p = self.page_position(key, scope)?;
        Ok(self.pointers_of(p))
    }

    pub(crate) fn pointers_of(&self, p: u32) -> Vec<Pointer> {
        let mut out: Vec<Pointer> = Vec::new();
        for s in &self.pages()[p as usize].sources {
            if out.iter().any(|o| o.chunk == s.chunk) {
                continue;
            }
            if let Ok(c) = self.chunk(&s.chunk) {
                out.push(Pointer {
                    chunk: c.id,
                    weight: s.weight,
                    hash: c.hash,
                });
            }
        }
        crate::data::sort::sort_by(&mut out, |a, b| {
            b.weight
                .total_cmp(&a.weight)
                .then_with(|| a.chunk.cmp(&b.chunk))
        });
        out.truncate(MAX_POINTERS);
        out
    }

    /// Walks the graph from `seeds` (page keys or ids) and returns the subgraph with its
    /// evidence (the rules are in the [module docs](crate::graph)).
    ///
    /// Pruning keeps seeds first (in the order given), then depth-1 nodes, then depth-2 nodes;
    /// within a depth, higher confidence first, then key, then id. Only kept depth-1 nodes are
    /// expanded. Archived and `never` pages are not entered (a seed may be one). Unknown seeds
    /// are listed, not an error: no known seed gives an empty subgraph.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a depth above [`MAX_DEPTH`], a minimum confidence outside
    /// `0.0..=1.0`, or `max_nodes` outside `1..=`[`MAX_NODES`].
    ///
    /// # Example
    /// ```
    /// # use wikidex::{IndexBuilder, TraverseOptions};
    /// let mut b = IndexBuilder::new(Default::default())?;
    /// b.add_file("leak.md", b"---\ntitle: memory leak\nrelations:\n  - {target: crash, type: causes, confidence: 0.9}\n---\nLeaks.")?;
    /// b.add_file("crash.md", b"---\ntitle: system crash\n---\nCrashes.")?;
    /// let (index, _) = b.build()?;
    /// let g = index.neighbors(&["leak"], &TraverseOptions::default())?;
    /// assert_eq!(g.chain, ["memory leak --[causes]--> system crash"]);
    /// assert!(index.neighbors(&["nothing"], &TraverseOptions::default())?.nodes.is_empty());
    /// # Ok::<(), wikidex::Error>(())
    /// ```
    pub fn neighbors(&self, seeds: &[&str], opts: &TraverseOptions) -> Result<Subgraph> {
        if opts.depth > MAX_DEPTH {
            return Err(Error::invalid_argument(format!(
                "depth {} is above {MAX_DEPTH}",
                opts.depth
            )));
        }
        if !(0.0..=1.0).contains(&opts.min_confidence) {
            return Err(Error::invalid_argument(
                "min_confidence must be within 0.0..=1.0",
            ));
        }
        if !(1..=MAX_NODES).contains(&opts.max_nodes) {
            return Err(Error::invalid_argument(format!(
                "max_nodes must be within 1..={MAX_NODES}"
            )));
        }
        let pages = self.pages();
        let mut kept: Vec<Visit> = Vec::new();
        let mut in_graph: HashSet<u32> = HashSet::new();
        let mut unknown = Vec::new();
        let mut truncated = false;
        for s in seeds {
            match self.resolve(s, opts.scope.as_ref())? {
                Some(p) => {
                    // The page came from this index, so its id is known; if it were not, the
                    // seed is reported as unknown rather than read as some other page.
                    let Some(i) = self.page_of_id(&p.id()) else {
                        unknown.push((*s).to_string());
                        continue;
                    };
                    if in_graph.contains(&i) {
                        continue;
                    }
                    if kept.len() == opts.max_nodes {
                        truncated = true;
                        continue;
                    }
                    in_graph.insert(i);
                    kept.push(Visit {
                        page: i,
                        depth: 0,
                        confidence: 1.0,
                        parent: None,
                    });
                }
                None => unknown.push((*s).to_string()),
            }
        }
        let mut frontier: Vec<usize> = (0..kept.len()).collect();
        for depth in 1..=opts.depth {
            let mut best: HashMap<u32, Visit> = HashMap::new();
            for &v in &frontier {
                let from = &kept[v];
                for (to, conf, edge) in self.connections(from.page) {
                    let p = &pages[to as usize];
                    if conf < opts.min_confidence
                        || in_graph.contains(&to)
                        || p.is_archived()
                        || p.usage_mode == UsageMode::Never
                    {
                        continue;
                    }
                    let c = from.confidence * conf;
                    let cand = Visit {
                        page: to,
                        depth,
                        confidence: c,
                        parent: Some((v, edge)),
                    };
                    match best.get(&to) {
                        Some(b) if b.confidence >= c => {}
                        _ => {
                            best.insert(to, cand);
                        }
                    }
                }
            }
            let mut layer: Vec<Visit> = best.into_values().collect();
            crate::data::sort::sort_by(&mut layer, |a, b| {
                b.confidence
                    .total_cmp(&a.confidence)
                    .then_with(|| pages[a.page as usize].key.cmp(&pages[b.page as usize].key))
                    .then_with(|| a.page.cmp(&b.page))
            });
            let room = opts.max_nodes - kept.len();
            if layer.len() > room {
                truncated = true;
                layer.truncate(room);
            }
            frontier = (kept.len()..kept.len() + layer.len()).collect();
            for v in layer {
                in_graph.insert(v.page);
                kept.push(v);
            }
        }
        Ok(self.subgraph(&kept, unknown, truncated, opts.min_confidence))
    }

    /// Searches the wiki, takes the top pages as seeds, walks the graph from them and returns
    /// the subgraph with its supporting chunks and evidence chain. A query that finds nothing
    /// gives an empty subgraph, not an error.
    ///
    /// # Errors
    /// As [`Index::search`] and [`Index::neighbors`]; [`Error::InvalidArgument`] for `seeds`
    /// outside `1..=20`.
    pub fn query_with_evidence(&self, query: &str, opts: &EvidenceOptions) -> Result<Evidence> {
        self.evidence_for(query, opts, None)
            .map(|(evidence, _)| evidence)
    }

    /// [`Index::query_with_evidence`] with `model` to embed the query, and the search it
    /// took its seeds from (for the query log).
    pub(crate) fn evidence_for(
        &self,
        query: &str,
        opts: &EvidenceOptions,
        model: Option<&dyn Embedder>,
    ) -> Result<(Evidence, Found<&Index>)> {
        if !(1..=20).contains(&opts.seeds) {
            return Err(Error::invalid_argument("seeds must be within 1..=20"));
        }
        let search = SearchOptions {
            limit: Some(opts.seeds),
            scope: opts.traverse.scope.clone(),
            always: AlwaysMode::Separate,
            snippets: false,
            ..SearchOptions::default()
        };
        let caller = Caller {
            model,
            ..Caller::default()
        };
        let found = Found::search(self, query, &search, None, caller)?;
        let results = found.results();
        let seeds: Vec<&str> = results.hits.iter().map(|h| h.page_id.as_str()).collect();
        let graph = self.neighbors(&seeds, &opts.traverse)?;
        let mut chunks: Vec<SupportingChunk> = Vec::new();
        let mut add = |id: &str, why: &str| {
            if chunks.iter().any(|c| c.id == id) {
                return;
            }
            if let Ok(c) = self.chunk(id) {
                chunks.push(SupportingChunk {
                    id: c.id,
                    why: why.to_string(),
                    hash: c.hash,
                    text: c.text,
                });
            }
        };
        for h in &results.hits {
            add(&h.chunk, "hit");
        }
        for e in &graph.edges {
            if let Some(c) = &e.chunk {
                add(c, "edge");
            }
        }
        for n in &graph.nodes {
            for s in &n.sources {
                add(&s.chunk, "source");
            }
        }
        let evidence = Evidence {
            query: query.to_string(),
            graph,
            chunks,
        };
        Ok((evidence, found))
    }

    fn page_position(&self, key: &str, scope: Option<&Scope>) -> Result<u32> {
        let p = self.page(key, scope)?;
        self.page_of_id(&p.id()).ok_or_else(|| Error::UnknownPage {
            key: key.to_string(),
        })
    }

    fn out_range(&self, p: u32) -> std::ops::Range<usize> {
        let edges = &self.data.graph.edges;
        edges.partition_point(|e| e.from < p)..edges.partition_point(|e| e.from <= p)
    }

    pub(crate) fn out_edges(&self, p: u32) -> &[EdgeRecord] {
        &self.data.graph.edges[self.out_range(p)]
    }

    pub(crate) fn in_edges(&self, p: u32) -> impl Iterator<Item = &EdgeRecord> {
        let g = &self.data.graph;
        let target = |i: &u32| match g.edges[*i as usize].to {
            Target::Page(t) => t,
            _ => u32::MAX,
        };
        let start = g.incoming.partition_point(|i| target(i) < p);
        let end = g.incoming.partition_point(|i| target(i) <= p);
        g.incoming[start..end]
            .iter()
            .map(move |&i| &g.edges[i as usize])
    }

    /// Page-to-page connections out of `p`: (target, connection confidence, the edge that
    /// explains it best), by target.
    fn connections(&self, p: u32) -> Vec<(u32, f32, usize)> {
        let edges = self.out_edges(p);
        let mut by_target: Vec<(u32, f32, usize, bool)> = Vec::new();
        let mut slot: HashMap<u32, usize> = HashMap::new();
        for (i, e) in edges.iter().enumerate() {
            let Target::Page(t) = e.to else { continue };
            let typed = is_relation(self.data.graph.text(e.kind));
            match slot.get(&t).map(|&k| &mut by_target[k]) {
                None => {
                    slot.insert(t, by_target.len());
                    by_target.push((t, e.confidence, i, typed));
                }
                Some(c) => {
                    // A typed relation decides the confidence of the connection; among typed
                    // relations the most confident one explains it.
                    if typed && (!c.3 || e.confidence > c.1) {
                        *c = (t, e.confidence, i, true);
                    }
                }
            }
        }
        let first = self.out_range(p).start;
        by_target
            .into_iter()
            .map(|(t, c, i, _)| (t, c, first + i))
            .collect()
    }

    fn subgraph(
        &self,
        kept: &[Visit],
        unknown_seeds: Vec<String>,
        truncated: bool,
        min_confidence: f32,
    ) -> Subgraph {
        let pages = self.pages();
        let all = &self.data.graph.edges;
        let position: HashMap<u32, usize> =
            kept.iter().enumerate().map(|(i, v)| (v.page, i)).collect();
        let nodes: Vec<GraphNode> = kept
            .iter()
            .map(|v| {
                let p = &pages[v.page as usize];
                GraphNode {
                    id: p.id(),
                    key: p.key.clone(),
                    title: p.title.clone(),
                    summary: p.summary.clone(),
                    path: p.path.clone(),
                    depth: v.depth,
                    confidence: v.confidence,
                    via: v
                        .parent
                        .map(|(parent, _)| pages[kept[parent].page as usize].id()),
                    stale_since: p.stale_since.clone(),
                    sources: self.pointers_of(v.page),
                    external: p.sl_refs.clone(),
                }
            })
            .collect();
        let mut edges = Vec::new();
        for v in kept {
            let conns: HashMap<u32, f32> = self
                .connections(v.page)
                .into_iter()
                .map(|(t, c, _)| (t, c))
                .collect();
            for e in self.out_edges(v.page) {
                let Target::Page(t) = e.to else { continue };
                let conn = conns.get(&t).copied().unwrap_or(1.0);
                if position.contains_key(&t) && conn >= min_confidence {
                    edges.push(self.public_edge(e));
                }
            }
        }
        let chain = kept
            .iter()
            .filter(|v| v.parent.is_some())
            .map(|v| {
                let mut steps = Vec::new();
                let mut cur = v;
                while let Some((parent, edge)) = cur.parent {
                    steps.push((
                        self.data.graph.text(all[edge].kind),
                        &pages[cur.page as usize].title,
                    ));
                    cur = &kept[parent];
                }
                let mut line = pages[cur.page as usize].title.clone();
                for (kind, title) in steps.iter().rev() {
                    line.push_str(&format!(" --[{kind}]--> {title}"));
                }
                line
            })
            .collect();
        Subgraph {
            seeds: kept
                .iter()
                .filter(|v| v.depth == 0)
                .map(|v| pages[v.page as usize].id())
                .collect(),
            unknown_seeds,
            nodes,
            edges,
            chain,
            truncated,
        }
    }

    pub(crate) fn public_edge(&self, e: &EdgeRecord) -> GraphEdge {
        let pages = self.pages();
        let text = |t| self.data.graph.text(t).to_string();
        let (to, target) = match e.to {
            Target::Page(t) => (pages[t as usize].id(), "page"),
            Target::External(n) => (text(n), "external"),
            Target::Missing(k) => (text(k), "missing"),
        };
        GraphEdge {
            from: pages[e.from as usize].id(),
            to,
            target: target.to_string(),
            kind: text(e.kind),
            confidence: e.confidence,
            written: text(e.written),
            evidence: e.evidence.map(text),
            chunk: e.chunk.map(|c| self.chunk_ref_id(c)),
        }
    }

    pub(crate) fn chunk_ref_id(&self, c: ChunkRef) -> String {
        match c {
            ChunkRef::Wiki(c) => self.chunk_id(c),
            ChunkRef::Raw(c) => self.raw_chunk_id(c),
        }
    }
}

/// A node reached by a traversal.
#[derive(Debug, Clone, Copy)]
struct Visit {
    page: u32,
    depth: u32,
    confidence: f32,
    /// Position of the parent in the kept list, and the index of the edge followed.
    parent: Option<(usize, usize)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexBuilder;

    fn index(files: &[(&str, &str)]) -> Index {
        let mut b = IndexBuilder::new(Default::default()).unwrap();
        for (p, t) in files {
            b.add_file(p, t.as_bytes()).unwrap();
        }
        b.build().unwrap().0
    }

    #[test]
    fn refs_links_relations_and_externals_become_edges_with_evidence() {
        let i = index(&[
            ("a.md", "---\nrefs: [b]\nsl_refs: [db.t]\nrelations:\n  - {target: c, type: causes, confidence: 0.5, evidence: why}\n---\nIntro.\n\nSee [[b]] for more. Also [[c]].\n"),
            ("b.md", "b"),
            ("c.md", "c"),
        ]);
        let e = i.edges_from("a", None).unwrap();
        let kinds: Vec<(&str, &str)> = e.iter().map(|e| (e.kind.as_str(), e.to.as_str())).collect();
        assert_eq!(
            kinds,
            [
                ("ref", "b"),
                ("link", "c"),
                ("causes", "c"),
                ("sl_ref", "db.t")
            ]
        );
        assert_eq!(e[0].evidence.as_deref(), Some("See [[b]] for more."));
        assert_eq!(e[0].chunk.as_deref(), Some("a::chunk_0"));
        assert_eq!(e[2].evidence.as_deref(), Some("why"));
        assert_eq!(i.edges_to("c", None).unwrap().len(), 2);
    }

    #[test]
    fn redirects_resolve_old_keys_and_stubs_point_at_the_new_page() {
        let i = index(&[
            ("new.md", "---\nredirect_from: [old, stub]\n---\nnew"),
            ("stub.md", "stub"),
            ("a.md", "[[old]] and [[stub]]"),
        ]);
        assert_eq!(i.resolve("old", None).unwrap().unwrap().key, "new");
        assert_eq!(i.resolve("stub", None).unwrap().unwrap().key, "new");
        let e = i.edges_from("a", None).unwrap();
        assert!(e.iter().all(|e| e.to == "new"));
        assert_eq!(i.edges_from("stub", None).unwrap()[0].kind, "redirect");
    }

    #[test]
    fn a_redirect_cycle_resolves_to_the_page_written() {
        let i = index(&[
            ("p.md", "---\nredirect_from: [q]\n---\np"),
            ("q.md", "---\nredirect_from: [p]\n---\nq"),
        ]);
        let r = i.names().resolve(i.pages(), &Scope::Global, "p");
        assert!(r.cycle);
        assert_eq!(r.page, Some(0));
    }

    #[test]
    fn traversal_prunes_seeds_then_depth_then_confidence_then_key() {
        let i = index(&[
            ("s.md", "---\nrefs: [z1, a1]\nrelations:\n  - {target: m1, type: x, confidence: 0.9}\n  - {target: l1, type: x, confidence: 0.2}\n---\ns"),
            ("z1.md", "[[d2]]"),
            ("a1.md", "a"),
            ("m1.md", "m"),
            ("l1.md", "l"),
            ("d2.md", "d"),
        ]);
        let opts = TraverseOptions {
            max_nodes: 4,
            ..Default::default()
        };
        let g = i.neighbors(&["s"], &opts).unwrap();
        let ids: Vec<&str> = g.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["s", "a1", "z1", "m1"]);
        assert!(g.truncated);
        let all = i.neighbors(&["s"], &TraverseOptions::default()).unwrap();
        let ids: Vec<&str> = all.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["s", "a1", "z1", "m1", "l1", "d2"]);
        assert_eq!(all.nodes[5].depth, 2);
        let strict = TraverseOptions {
            min_confidence: 0.5,
            ..Default::default()
        };
        let g = i.neighbors(&["s"], &strict).unwrap();
        assert!(!g.nodes.iter().any(|n| n.id == "l1"));
        let shallow = TraverseOptions {
            depth: 1,
            ..Default::default()
        };
        assert!(!i
            .neighbors(&["s"], &shallow)
            .unwrap()
            .nodes
            .iter()
            .any(|n| n.id == "d2"));
    }

    #[test]
    fn no_known_seed_is_an_empty_graph_and_bad_options_are_errors() {
        let i = index(&[("a.md", "a")]);
        let g = i.neighbors(&[], &TraverseOptions::default()).unwrap();
        assert!(g.nodes.is_empty() && g.edges.is_empty() && g.chain.is_empty());
        let g = i.neighbors(&["zz"], &TraverseOptions::default()).unwrap();
        assert_eq!(g.unknown_seeds, ["zz"]);
        let deep = TraverseOptions {
            depth: 3,
            ..Default::default()
        };
        assert_eq!(
            i.neighbors(&["a"], &deep).unwrap_err().code(),
            "invalid_argument"
        );
    }

    #[test]
    fn a_redirect_chain_longer_than_the_limit_is_an_error_not_nothing() {
        // Page pN claims the key `pN-1`: the key `p0` reaches p20 through 20 redirects.
        let mut files = Vec::new();
        for n in 1..=20 {
            files.push((
                format!("p{n}.md"),
                format!("---\nredirect_from: [p{}]\n---\nx", n - 1),
            ));
        }
        files.push(("p0.md".to_string(), "x".to_string()));
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let i = index(&refs);
        let short = i.resolve("p18", None).unwrap().unwrap();
        assert_eq!(short.key, "p20");
        assert!(i.resolve("missing-start", None).unwrap().is_none());
        let mut chain = refs.clone();
        chain.retain(|(p, _)| *p != "p0.md");
        let i = index(&chain);
        let err = i.resolve("p0", None).unwrap_err();
        assert_eq!(err.code(), "invalid_page");
        assert!(err.to_string().contains("redirects"), "{err}");
    }

    #[test]
    fn archived_pages_are_not_entered() {
        let i = index(&[
            ("a.md", "[[old]]"),
            ("old.md", "---\narchived_since: 2024-01-01\n---\nold"),
        ]);
        let g = i.neighbors(&["a"], &TraverseOptions::default()).unwrap();
        assert_eq!(g.nodes.len(), 1);
    }
}
