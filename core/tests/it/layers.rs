//! The core is layered (STYLE "Layout", issue 8): each module imports only from its own layer or
//! the ones below. This test reads every `crate::` path in the crate's sources (outside comments
//! and unit-test modules; root re-exports such as `crate::Index` resolve to the module that
//! defines them) and fails when a module reaches up.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Bottom-up: plain data, text, structures built from it, the blob codec, operations over a
/// read-only snapshot, the front. Keep in step with the crate docs' tour.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "data",
        &[
            "error", "config", "record", "offset", "date", "sort", "file", "options",
        ],
    ),
    ("text", &["marks", "analyze", "chunk", "page"]),
    ("structures", &["lane", "embed", "fusion", "graph", "raw"]),
    ("codec", &["blob"]),
    (
        "operations",
        &[
            "snapshot", "vectors", "search", "traverse", "cite", "lint", "eval", "tools",
            "querylog", "ranged",
        ],
    ),
    ("front", &["index", "front", "lib"]),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `src/` with the top-level module it belongs to.
fn sources() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![src()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src()).expect("under src");
                let first = rel.components().next().expect("component");
                let module = first.as_os_str().to_string_lossy();
                let module = module.trim_end_matches(".rs").to_string();
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

/// Root re-exports of lib.rs: name → defining module.
fn reexports() -> BTreeMap<String, String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    let mut map = BTreeMap::new();
    for stmt in code(&lib).split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let module = rest.split("::").next().unwrap_or("").trim().to_string();
        let names = rest.rsplit("::").next().unwrap_or("");
        for name in names.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if name.chars().next().is_some_and(char::is_uppercase) {
                map.insert(name.to_string(), module.clone());
            }
        }
    }
    map
}

/// The modules `code` names through `crate::` paths (`use crate::{a, b::C}` included).
fn imports(code: &str, reexports: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            group[..end].split(',').collect()
        } else {
            vec![rest]
        };
        for n in names {
            let first: String = n
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if first.is_empty() || first == "self" {
                continue;
            }
            let module = reexports.get(&first).cloned().unwrap_or(first);
            out.push(module);
        }
    }
    out
}

#[test]
fn no_module_of_core_imports_from_a_layer_above_it() {
    let reexports = reexports();
    let mut violations = Vec::new();
    for (module, path) in sources() {
        let Some(own) = layer_of(&module) else {
            violations.push(format!("{module}: not in any layer (add it to LAYERS)"));
            continue;
        };
        let text = std::fs::read_to_string(&path).expect("source");
        for used in imports(&code(&text), &reexports) {
            match layer_of(&used) {
                Some(l) if l > own => violations.push(format!(
                    "{}: {module} ({}) imports {used} ({})",
                    path.strip_prefix(src()).unwrap_or(&path).display(),
                    LAYERS[own].0,
                    LAYERS[l].0
                )),
                _ => {}
            }
        }
    }
    violations.sort();
    violations.dedup();
    assert!(
        violations.is_empty(),
        "modules import from a layer above them:\n{}",
        violations.join("\n")
    );
}
