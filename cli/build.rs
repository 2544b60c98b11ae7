//! Embeds the search bundle `wikidex site` writes next to a site's pages: the browser's search
//! module (`bindings-wasm/pkg-search`, from `make wasm`) and the search UI
//! (`bindings-wasm/ui`), so that the command works from the binary alone; and the module with
//! the model runner (`bindings-wasm/pkg-full`, as `semantic/…`), which `wikidex site --model`
//! adds to the bundle for the UI's semantic toggle.
//!
//! A checkout built before `make wasm` has no search module yet: the binary is built without
//! it, and `wikidex site` says so and what to run (without the model runner's module, `--model`
//! does). `WIKIDEX_REQUIRE_SITE_BUNDLE=1` (set by `make dist`; `make test` builds the modules
//! before its Rust tests) makes a missing file an error here instead.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The search module's files, in `bindings-wasm/pkg-search`.
const MODULE: [&str; 3] = ["wikidex_wasm.js", "wikidex_wasm_bg.wasm", "ranged.js"];
/// The module with the model runner's files, in `bindings-wasm/pkg-full`.
const FULL: [&str; 2] = ["wikidex_wasm.js", "wikidex_wasm_bg.wasm"];

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("..");
    let module = root.join("bindings-wasm/pkg-search");
    let ui = root.join("bindings-wasm/ui");
    let full = root.join("bindings-wasm/pkg-full");
    println!("cargo:rerun-if-env-changed=WIKIDEX_REQUIRE_SITE_BUNDLE");
    println!("cargo:rerun-if-changed={}", module.display());
    println!("cargo:rerun-if-changed={}", ui.display());
    println!("cargo:rerun-if-changed={}", full.display());
    let mut files: Vec<PathBuf> = MODULE.iter().map(|f| module.join(f)).collect();
    // The UI's shipped files: all but its docs and declarations.
    let mut shipped: Vec<PathBuf> = std::fs::read_dir(&ui)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    shipped.retain(|p| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        p.is_file() && !name.starts_with('.') && !name.ends_with(".md") && !name.ends_with(".d.ts")
    });
    shipped.sort();
    files.extend(shipped);
    // (file, its name in the bundle, whether `wikidex site` needs it without a model)
    let mut named: Vec<(PathBuf, String, bool)> = files
        .into_iter()
        .map(|f| {
            let name = f.file_name().unwrap().to_str().unwrap().to_string();
            (f, name, true)
        })
        .collect();
    named.extend(FULL.map(|f| (full.join(f), format!("semantic/{f}"), false)));
    let mut assets = String::from("&[\n");
    let mut missing = Vec::new();
    let mut absent = Vec::new();
    for (f, name, needed) in &named {
        println!("cargo:rerun-if-changed={}", f.display());
        if f.is_file() {
            writeln!(assets, "    ({name:?}, include_bytes!({:?})),", abs(f)).unwrap();
        } else if *needed {
            missing.push(abs(f));
        } else {
            absent.push(abs(f));
        }
    }
    assets.push(']');
    if !(missing.is_empty() && absent.is_empty())
        && std::env::var_os("WIKIDEX_REQUIRE_SITE_BUNDLE").is_some_and(|v| v == "1")
    {
        panic!("the site bundle is missing files (run `make wasm`): {missing:?} {absent:?}");
    }
    let missing = format!("&{missing:?}");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("site_bundle.rs");
    let code = format!(
        "/// The bundle's files: (name, bytes).\npub(crate) const ASSETS: &[(&str, &[u8])] = {assets};\n\
         /// The files this binary was built without.\npub(crate) const MISSING: &[&str] = {missing};\n"
    );
    std::fs::write(out, code).unwrap();
}

fn abs(p: &Path) -> String {
    p.canonicalize()
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}
