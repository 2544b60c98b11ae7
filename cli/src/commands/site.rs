//! `wikidex site`: search for a static docs site. The core indexes the sources and writes the
//! bundle ([`wikidex::site::write`]); this command gives it the bundle's files, which the
//! binary carries (`build.rs`), and prints what it wrote and how to add the UI to a page.

use std::process::ExitCode;

use serde_json::json;
use wikidex::site::{Anchors, Layout, SiteOptions};
use wikidex::Error;

use crate::args::SiteArgs;
use crate::render::{print_json, print_problems, say, with_progress};

mod bundle {
    include!(concat!(env!("OUT_DIR"), "/site_bundle.rs"));
}

pub(crate) fn site(a: SiteArgs) -> Result<ExitCode, Error> {
    if let Some(missing) = bundle::MISSING.first() {
        return Err(Error::Io {
            path: (*missing).into(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "this wikidex was built without the browser search bundle: run `make wasm`, \
                 then build the CLI again",
            ),
        });
    }
    let options = SiteOptions {
        layout: a.layout.as_deref().map(Layout::parse).transpose()?,
        url_pattern: a.url_pattern.clone(),
        anchors: a.anchors.as_deref().map(Anchors::parse).transpose()?,
        bundle_dir: a.bundle_dir.clone(),
        config: a.config.config()?,
        strict: a.strict,
    };
    let assets: Vec<(String, Vec<u8>)> = bundle::ASSETS
        .iter()
        .map(|(name, bytes)| ((*name).to_string(), bytes.to_vec()))
        .collect();
    let report = with_progress(a.json, |progress| {
        wikidex::site::write(
            &a.src,
            &a.out,
            &options,
            &assets,
            a.model.as_deref(),
            progress,
        )
    })?;
    let bundle = report.bundle.display().to_string();
    if a.json {
        print_json(&json!({
            "bundle": bundle,
            "files": report.files,
            "site": report.manifest,
            "skipped": report.build.skipped,
            "warnings": report.build.warnings,
            "snippet": report.snippet,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    let m = &report.manifest;
    say!(
        "wrote {bundle}: {} pages, {} chunks, {} files",
        m.pages,
        m.chunks,
        report.files.len()
    );
    if let Some(s) = &m.semantic {
        say!(
            "semantic toggle: {} ({} dimensions), {:.1} MB loaded when a reader turns it on",
            s.model_id,
            s.dim,
            s.bytes as f64 / 1e6
        );
    }
    print_problems(&report.build);
    say!("add search to a page of the site:");
    for line in report.snippet.lines() {
        say!("  {line}");
    }
    Ok(ExitCode::SUCCESS)
}
