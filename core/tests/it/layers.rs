//! The core is layered (CONTRIBUTING.md): `core/src` has one folder (or root file) per concept,
//! each in one layer, and a module imports only from its own layer or the ones below. This test
//! reads the folders: every `.rs` file under `src/`, every `crate::` path in its code (outside
//! comments and unit-test modules; root re-exports such as `crate::Index` resolve to the module
//! that defines them). It fails when a module reaches up, when a folder is in no layer, and
//! when modules import each other in a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Bottom-up: the folders (or root files) of each layer. Keep in step with the crate docs' tour.
const LAYERS: &[(&str, &[&str])] = &[
    ("data", &["data"]),
    ("text", &["text"]),
    ("postings", &["postings"]),
    ("structures", &["embed", "graph", "lane"]),
    ("store", &["blob"]),
    ("index", &["index"]),
    ("operations", &["cite", "lint", "search", "traverse"]),
    ("front", &["front", "lib"]),
];

fn layer_of(module: &[String]) -> Option<usize> {
    let top = module.first()?;
    LAYERS
        .iter()
        .position(|(_, folders)| folders.contains(&top.as_str()))
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `src/` with its module path (`data/config.rs` is `data::config`,
/// `search/mod.rs` is `search`, `lib.rs` is `lib`).
fn sources() -> Vec<(Vec<String>, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![src()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src()).expect("under src");
                let mut module: Vec<String> = rel
                    .with_extension("")
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if module.last().is_some_and(|m| m == "mod") {
                    module.pop();
                }
                out.push((module, path));
            }
        }
    }
    out.sort();
    out
}

/// The code of a source file without comments and without its unit-test module.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|l| l.trim_start().starts_with("mod "))
        {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push_str(line.split(" //").next().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// The names `lib.rs` re-exports (`pub use a::b::C;`, `pub use a::{b, c};`), each with the
/// module path it names: a type resolves to the module that defines it, a re-exported module
/// to its folder.
fn reexports() -> BTreeMap<String, Vec<String>> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    let mut map = BTreeMap::new();
    for stmt in code(&lib).split(';') {
        let stmt = stmt.trim();
        let Some(rest) = stmt
            .strip_prefix("pub use ")
            .or_else(|| stmt.strip_prefix("use "))
        else {
            continue;
        };
        let (prefix, names) = match rest.find('{') {
            Some(i) => (&rest[..i], rest[i + 1..].trim_end_matches('}')),
            None => rest.rsplit_once("::").map_or(("", rest), |(p, n)| (p, n)),
        };
        let prefix: Vec<String> = prefix
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let mut path = prefix.clone();
            if name.chars().next().is_some_and(char::is_lowercase) {
                path.push(name.to_string()); // a module: its own path
            }
            map.insert(name.to_string(), path);
        }
    }
    map
}

/// The modules `code` (of the module `own`) names through `crate::` and `super::` paths
/// (`use crate::{a, b::C}` included), each as the longest module path that is a source file.
fn imports(
    code: &str,
    own: &[String],
    modules: &BTreeSet<Vec<String>>,
    reexports: &BTreeMap<String, Vec<String>>,
) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    for (anchor, base) in [
        ("crate::", Vec::new()),
        ("super::", own[..own.len().saturating_sub(1)].to_vec()),
    ] {
        let mut rest = code;
        while let Some(at) = rest.find(anchor) {
            let before = rest[..at].chars().last();
            rest = &rest[at + anchor.len()..];
            if before.is_some_and(|c| word(c) || c == ':') {
                continue; // `super::super::` is read from its first `super::`
            }
            let paths: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group[..group.find('}').unwrap_or(group.len())]
                    .split(',')
                    .collect(),
                None => vec![rest],
            };
            for p in paths {
                let mut path = base.clone();
                for seg in p.trim().split("::") {
                    let seg: String = seg.chars().take_while(|&c| word(c)).collect();
                    if seg.is_empty() || seg == "self" {
                        break;
                    }
                    if seg == "super" {
                        path.pop();
                        continue;
                    }
                    path.push(seg);
                }
                if anchor == "crate::" {
                    if let Some(first) = path.first().and_then(|f| reexports.get(f)) {
                        let mut resolved = first.clone();
                        resolved.extend(path.drain(1..));
                        path = resolved;
                    }
                }
                while !path.is_empty() && !modules.contains(&path) {
                    path.pop();
                }
                if !path.is_empty() && path != own {
                    out.insert(path);
                }
            }
        }
    }
    out
}

/// Every module with the modules it imports.
fn graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let sources = sources();
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|(m, _)| m.clone()).collect();
    let reexports = reexports();
    sources
        .iter()
        .map(|(module, path)| {
            let text = std::fs::read_to_string(path).expect("source");
            let used = imports(&code(&text), module, &modules, &reexports);
            (module.clone(), used)
        })
        .collect()
}

#[test]
fn no_module_of_core_imports_from_a_layer_above_it() {
    let mut violations = Vec::new();
    for (module, used) in graph() {
        let Some(own) = layer_of(&module) else {
            violations.push(format!(
                "{}: in no layer (add its folder to LAYERS)",
                module.join("::")
            ));
            continue;
        };
        for u in used {
            match layer_of(&u) {
                Some(l) if l > own => violations.push(format!(
                    "{} ({}) imports {} ({})",
                    module.join("::"),
                    LAYERS[own].0,
                    u.join("::"),
                    LAYERS[l].0
                )),
                _ => {}
            }
        }
    }
    assert!(
        violations.is_empty(),
        "modules import from a layer above them:\n{}",
        violations.join("\n")
    );
}

/// The concept a module belongs to: its folder's second level (`search::ranged`), or the
/// folder itself for its `mod.rs` and a root file.
fn concept(module: &[String]) -> Vec<String> {
    module.iter().take(2).cloned().collect()
}

#[test]
fn no_two_concepts_of_core_import_each_other_in_a_circle() {
    // A folder's `mod.rs` and the files under it are one family (a parent declares its
    // children, a child uses its parent's helpers): only imports between concepts count.
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, used) in graph() {
        let from = concept(&module);
        for u in used {
            let to = concept(&u);
            let family = to.starts_with(&from) || from.starts_with(&to);
            if !family && from != ["lib"] {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    // Depth-first search; a back edge is a circle.
    fn visit(
        node: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
        circles: &mut Vec<String>,
    ) {
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next).copied().unwrap_or(0) {
                0 => visit(next, edges, state, stack, circles),
                1 => {
                    let at = stack.iter().position(|n| n == next).unwrap_or(0);
                    let mut circle: Vec<String> =
                        stack[at..].iter().map(|n| n.join("::")).collect();
                    circle.push(next.join("::"));
                    circles.push(circle.join(" -> "));
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
    }
    let mut state = BTreeMap::new();
    let mut circles = Vec::new();
    for node in edges.keys() {
        if !state.contains_key(node) {
            visit(node, &edges, &mut state, &mut Vec::new(), &mut circles);
        }
    }
    assert!(
        circles.is_empty(),
        "modules of core import each other in a circle:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_layering_test_sees_imports() {
    // The parser finds what it must: a grouped import, a root re-export, a `super::` path.
    let g = graph();
    let of = |m: &str| g[&m.split("::").map(str::to_string).collect::<Vec<_>>()].clone();
    let session = of("front::session");
    assert!(session.contains(&vec!["index".to_string()]), "{session:?}");
    assert!(session.contains(&vec!["front".to_string(), "tools".to_string()]));
    let lexical = of("lane::lexical");
    assert!(lexical.contains(&vec!["lane".to_string()]), "{lexical:?}");
}
