//! `wikidex embed`: vectors for texts, or the time to embed a whole corpus.

use std::process::ExitCode;
use std::time::Instant;

use serde_json::json;
use wikidex::{eval, Embedder, Error};

use crate::args::EmbedArgs;
use crate::render::{print_json, say};

pub(crate) fn embed(a: EmbedArgs) -> Result<ExitCode, Error> {
    let model = a.model.load()?;
    if let Some(dir) = &a.corpus {
        let path = dir.join("corpus.jsonl");
        let text = wikidex::file::read_text_capped(&path, u64::MAX, "corpus bytes")?;
        let mut docs = Vec::new();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let (_, title, body) = eval::beir_doc(line).map_err(|reason| Error::InvalidInput {
                path: path.display().to_string(),
                line: Some(i as u32 + 1),
                reason,
            })?;
            docs.push(format!("{title} {body}"));
        }
        let texts: Vec<&str> = docs.iter().map(String::as_str).collect();
        let started = Instant::now();
        let vectors = model.embed(&texts)?;
        let seconds = started.elapsed().as_secs_f64();
        let tokens: usize = model.tokenize(&texts)?.iter().map(Vec::len).sum();
        let out = json!({
            "model": model.model_id(),
            "sequences": vectors.len(),
            "tokens": tokens,
            "seconds": seconds,
        });
        if a.json {
            print_json(&out);
        } else {
            say!(
                "{} sequences ({tokens} tokens) in {seconds:.2}s: {:.1} sequences/s",
                vectors.len(),
                vectors.len() as f64 / seconds.max(1e-9)
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let texts: Vec<&str> = a.texts.iter().map(String::as_str).collect();
    let vectors = model.embed(&texts)?;
    if a.json {
        print_json(&json!({
            "model": model.model_id(),
            "fingerprint": model.fingerprint(),
            "dim": model.dim(),
            "vectors": vectors,
        }));
    } else {
        for v in &vectors {
            let cells: Vec<String> = v.iter().map(|x| format!("{x:.6}")).collect();
            say!("[{}]", cells.join(", "));
        }
    }
    Ok(ExitCode::SUCCESS)
}
