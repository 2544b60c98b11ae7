//! The frontmatter of a page: its YAML checked for shape and size before it is parsed, and
//! read into the page's fields (relations, sources, extra fields).

use std::collections::{BTreeMap, HashMap};

use yaml_rust2::Yaml;

use super::{
    link_key, Relation, SourceRef, UsageMode, MAX_FRONTMATTER_DEPTH, MAX_FRONTMATTER_NODES,
};

/// Reads the YAML's events (no tree is built) and refuses a block that nests deeper than
/// [`MAX_FRONTMATTER_DEPTH`] or expands to more than [`MAX_FRONTMATTER_NODES`] nodes through
/// aliases. Cost: one pass over the text, stopping at the first excess. A syntax error is left
/// for the loader to report.
pub(super) fn check_yaml_shape(yaml: &str) -> std::result::Result<(), (Option<u32>, String)> {
    use yaml_rust2::parser::{Event as YamlEvent, Parser as YamlParser};
    let mut parser = YamlParser::new_from_str(yaml);
    // Expanded size of each anchored node, by anchor id.
    let mut sizes: HashMap<usize, usize> = HashMap::new();
    // Open collections: (anchor id, node count when opened).
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut nodes = 0usize;
    loop {
        let Ok((event, mark)) = parser.next_token() else {
            return Ok(());
        };
        let line = || {
            Some(
                u32::try_from(mark.line())
                    .unwrap_or(u32::MAX)
                    .saturating_add(1),
            )
        };
        match event {
            YamlEvent::StreamEnd => return Ok(()),
            YamlEvent::Scalar(_, _, anchor, _) => {
                nodes = nodes.saturating_add(1);
                if anchor > 0 {
                    sizes.insert(anchor, 1);
                }
            }
            YamlEvent::Alias(id) => {
                nodes = nodes.saturating_add(sizes.get(&id).copied().unwrap_or(1));
            }
            YamlEvent::SequenceStart(anchor, _) | YamlEvent::MappingStart(anchor, _) => {
                nodes = nodes.saturating_add(1);
                open.push((anchor, nodes));
                if open.len() > MAX_FRONTMATTER_DEPTH {
                    return Err((
                        line(),
                        format!("frontmatter nests deeper than {MAX_FRONTMATTER_DEPTH} levels"),
                    ));
                }
            }
            YamlEvent::SequenceEnd | YamlEvent::MappingEnd => {
                if let Some((anchor, at)) = open.pop() {
                    if anchor > 0 {
                        sizes.insert(anchor, nodes - at + 1);
                    }
                }
            }
            _ => {}
        }
        if nodes > MAX_FRONTMATTER_NODES {
            return Err((
                line(),
                format!(
                    "frontmatter expands to more than {MAX_FRONTMATTER_NODES} values \
                     (YAML aliases repeat what they name)"
                ),
            ));
        }
    }
}

pub(super) type FrontmatterSplit<'a> =
    std::result::Result<(Option<&'a str>, usize), (Option<u32>, String)>;

/// Splits `---\n<yaml>\n---\n<body>`; returns the YAML (if any) and the body's byte offset.
pub(super) fn split_frontmatter(text: &str) -> FrontmatterSplit<'_> {
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let rest = &text[start..];
    let first_line_end = rest.find('\n').map_or(rest.len(), |i| i + 1);
    if rest[..first_line_end].trim_end() != "---" {
        // No frontmatter: the body starts after a byte-order mark, if any.
        return Ok((None, start));
    }
    let yaml_start = start + first_line_end;
    let mut pos = yaml_start;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        let line = text[pos..end].trim_end();
        if line == "---" || line == "..." {
            return Ok((Some(&text[yaml_start..pos]), end));
        }
        pos = end;
    }
    Err((
        Some(1),
        "frontmatter opened with `---` is never closed".to_string(),
    ))
}

#[derive(Default)]
pub(super) struct Fields {
    pub(super) title: Option<String>,
    pub(super) summary: Option<String>,
    pub(super) description: Option<String>,
    pub(super) tags: Vec<String>,
    pub(super) kind: Option<String>,
    pub(super) refs: Vec<String>,
    pub(super) sl_refs: Vec<String>,
    pub(super) relations: Vec<Relation>,
    pub(super) usage_mode: UsageMode,
    pub(super) source: Option<String>,
    pub(super) sources: Vec<SourceRef>,
    pub(super) aliases: Vec<String>,
    pub(super) redirect_from: Vec<String>,
    pub(super) stale_since: Option<String>,
    pub(super) archived_since: Option<String>,
    pub(super) extra: BTreeMap<String, serde_json::Value>,
}

impl Fields {
    /// Stores one frontmatter field. A known field with a value of the wrong shape is kept in
    /// `extra` (nothing is lost) and reported as a warning.
    pub(super) fn set(&mut self, name: &str, v: Yaml, warnings: &mut Vec<String>) {
        let ok = match name {
            "title" => put(&mut self.title, scalar_string(&v)),
            "summary" | "tldr" | "TL;DR" => put(&mut self.summary, scalar_string(&v)),
            "description" => put(&mut self.description, scalar_string(&v)),
            "type" => put(&mut self.kind, scalar_string(&v)),
            "source" => put(&mut self.source, scalar_string(&v)),
            "stale_since" => put(&mut self.stale_since, scalar_string(&v)),
            "archived_since" => put(&mut self.archived_since, scalar_string(&v)),
            "tags" => put_list(&mut self.tags, string_list(&v), |t| {
                t.trim_start_matches('#').to_string()
            }),
            "refs" => put_list(&mut self.refs, string_list(&v), link_key),
            "redirect_from" => put_list(&mut self.redirect_from, string_list(&v), link_key),
            "aliases" | "alias" => put_list(&mut self.aliases, string_list(&v), str::to_string),
            "sl_refs" => put_list(&mut self.sl_refs, string_list(&v), str::to_string),
            "usage_mode" => match scalar_string(&v)
                .as_deref()
                .and_then(|s| UsageMode::parse(s).ok())
            {
                Some(m) => {
                    self.usage_mode = m;
                    true
                }
                None => false,
            },
            "relations" => match relations(&v) {
                Some((good, bad)) => {
                    self.relations = good;
                    // Refused entries are reported one by one and kept (as unknown data under
                    // `relations`), so nothing the author wrote is lost.
                    if !bad.is_empty() {
                        let mut kept = Vec::new();
                        for (i, item, reason) in bad {
                            warnings.push(format!(
                                "relations[{i}] refused: {reason}; kept as an unknown field"
                            ));
                            kept.push(yaml_to_json(item));
                        }
                        self.extra
                            .insert(name.to_string(), serde_json::Value::Array(kept));
                    }
                    true
                }
                None => false,
            },
            "sources" => match sources(&v) {
                Some(s) => {
                    self.sources = s;
                    true
                }
                None => false,
            },
            _ => {
                self.extra.insert(name.to_string(), yaml_to_json(&v));
                return;
            }
        };
        if !ok {
            warnings.push(format!(
                "field `{name}` has an unexpected shape; kept as an unknown field"
            ));
            self.extra.insert(name.to_string(), yaml_to_json(&v));
        }
    }
}

pub(super) fn put(slot: &mut Option<String>, v: Option<String>) -> bool {
    match v {
        Some(s) => {
            *slot = Some(s);
            true
        }
        None => false,
    }
}

pub(super) fn put_list(
    slot: &mut Vec<String>,
    v: Option<Vec<String>>,
    f: impl Fn(&str) -> String,
) -> bool {
    match v {
        Some(items) => {
            *slot = items
                .iter()
                .map(|s| f(s.trim()))
                .filter(|s| !s.is_empty())
                .collect();
            true
        }
        None => false,
    }
}

pub(super) fn scalar_string(v: &Yaml) -> Option<String> {
    match v {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A list of strings; a single scalar is a one-element list, and a comma-separated string (as
/// some tools write `tags: a, b`) is split. `null` is an empty list.
pub(super) fn string_list(v: &Yaml) -> Option<Vec<String>> {
    match v {
        Yaml::Null => Some(Vec::new()),
        Yaml::Array(items) => items.iter().map(scalar_string).collect(),
        other => scalar_string(other).map(|s| s.split(',').map(str::to_string).collect()),
    }
}

pub(super) fn hash_get<'a>(v: &'a Yaml, name: &str) -> Option<&'a Yaml> {
    match v {
        Yaml::Hash(map) => map.get(&Yaml::String(name.to_string())),
        _ => None,
    }
}

pub(super) fn number(v: &Yaml) -> Option<f32> {
    match v {
        Yaml::Integer(i) => Some(*i as f32),
        Yaml::Real(s) => s.parse::<f32>().ok().filter(|x| x.is_finite()),
        _ => None,
    }
}

/// The valid entries of a `relations` list, and each invalid one with its position and why it
/// was refused. `None` when the value is not a list (nor null) at all.
#[allow(clippy::type_complexity)]
pub(super) fn relations(v: &Yaml) -> Option<(Vec<Relation>, Vec<(usize, &Yaml, String)>)> {
    let Yaml::Array(items) = v else {
        return matches!(v, Yaml::Null).then(|| (Vec::new(), Vec::new()));
    };
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match relation(item) {
            Ok(r) => good.push(r),
            Err(reason) => bad.push((i, item, reason)),
        }
    }
    Some((good, bad))
}

pub(super) fn relation(item: &Yaml) -> std::result::Result<Relation, String> {
    if !matches!(item, Yaml::Hash(_)) {
        return Err("not a mapping with a `target`".into());
    }
    let target = hash_get(item, "target").ok_or("no `target`")?;
    let target = link_key(&scalar_string(target).ok_or("`target` is not a string")?);
    if target.is_empty() {
        return Err("`target` is empty".into());
    }
    let kind = hash_get(item, "type")
        .and_then(scalar_string)
        .unwrap_or_else(|| "related".to_string());
    let confidence = match hash_get(item, "confidence") {
        None => 1.0,
        Some(c) => {
            let x = match c {
                Yaml::Integer(i) => *i as f32,
                Yaml::Real(s) => s
                    .parse::<f32>()
                    .map_err(|_| format!("confidence `{s}` is not a number"))?,
                other => {
                    let shown = scalar_string(other).unwrap_or_else(|| "a list or mapping".into());
                    return Err(format!("confidence `{shown}` is not a number"));
                }
            };
            if !x.is_finite() {
                return Err(format!("confidence {x} is not a finite number"));
            }
            if !(0.0..=1.0).contains(&x) {
                return Err(format!("confidence {x} is outside 0..=1"));
            }
            x
        }
    };
    let evidence = hash_get(item, "evidence").and_then(scalar_string);
    let chunk = hash_get(item, "chunk")
        .or_else(|| hash_get(item, "evidence_chunk"))
        .and_then(scalar_string);
    Ok(Relation {
        target,
        kind,
        confidence,
        evidence,
        chunk,
    })
}

pub(super) fn sources(v: &Yaml) -> Option<Vec<SourceRef>> {
    let Yaml::Array(items) = v else {
        return match v {
            Yaml::Null => Some(Vec::new()),
            other => scalar_string(other).map(|chunk| vec![SourceRef::new(chunk)]),
        };
    };
    items
        .iter()
        .map(|item| match item {
            Yaml::Hash(_) => {
                let chunk = hash_get(item, "chunk")
                    .or_else(|| hash_get(item, "id"))
                    .and_then(scalar_string)?;
                let weight = match hash_get(item, "weight") {
                    None => 1.0,
                    Some(w) => number(w)?,
                };
                let hash = hash_get(item, "hash").and_then(scalar_string);
                Some(SourceRef {
                    chunk,
                    weight,
                    hash,
                })
            }
            other => scalar_string(other).map(SourceRef::new),
        })
        .collect()
}

pub(super) fn yaml_to_json(v: &Yaml) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Yaml::Real(s) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Value::String(s.clone()), Value::Number),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Array(items) => Value::Array(items.iter().map(yaml_to_json).collect()),
        Yaml::Hash(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let key = scalar_string(k).unwrap_or_else(|| format!("{k:?}"));
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        Yaml::Null | Yaml::BadValue | Yaml::Alias(_) => Value::Null,
    }
}
