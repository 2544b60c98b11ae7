//! `wikidex lint`.

use std::process::ExitCode;

use wikidex::{Error, Index};

use crate::args::LintArgs;
use crate::render::{print_json, say};

pub(crate) fn lint(a: LintArgs) -> Result<ExitCode, Error> {
    let report = if a.path.is_dir() {
        Index::lint_dir(&a.path, a.raw.as_deref(), a.follow_outside_root)?
    } else {
        Index::open(&a.path)?.lint()
    };
    if a.json {
        print_json(&report);
    } else {
        for i in &report.issues {
            let sev = match i.severity {
                wikidex::Severity::Error => "error",
                wikidex::Severity::Warning => "warning",
            };
            say!("{sev}[{}] {}: {}", i.code, i.page_id, i.message);
        }
        say!(
            "{} error{}, {} warning{}",
            report.errors,
            if report.errors == 1 { "" } else { "s" },
            report.warnings,
            if report.warnings == 1 { "" } else { "s" }
        );
    }
    Ok(if report.errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
