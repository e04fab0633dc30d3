//! Every relative link in `README.md` and `docs/**/*.md` resolves: the file (or folder) it names
//! exists, and an `#anchor` into a Markdown file names one of that file's headings, by the ids
//! GitHub gives headings (lower case; punctuation dropped except `-` and `_`; each space a `-`; a
//! repeated heading gets `-1`, `-2`, …). Links inside code (fenced blocks, inline spans) are not
//! links; `http(s):` and `mailto:` targets are not checked (no network in tests).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// Files a guide links to that another change is writing at the same time: allowed to be missing
/// until they exist. `pending_files_are_still_missing` fails once one exists, so delete it here
/// then.
const PENDING_FILES: &[&str] = &[];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md` and every `.md` under `docs/`, as paths relative to the repository.
fn documents() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path.strip_prefix(root()).unwrap().to_path_buf());
            }
        }
    }
    let mut docs = vec![PathBuf::from("README.md")];
    walk(&root().join("docs"), &mut docs);
    docs.sort();
    docs
}

/// The text outside fenced code blocks, line by line (fenced lines become empty, so line numbers
/// stay right).
fn prose_lines(text: &str) -> Vec<String> {
    let mut fenced = false;
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return String::new();
            }
            if fenced {
                String::new()
            } else {
                without_code_spans(line)
            }
        })
        .collect()
}

/// `line` with its inline code spans (`` `…` ``) removed.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// The targets of the Markdown links and images on `line` (`[text](target)`, `![alt](target)`).
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        match after.find(')') {
            Some(end) => {
                targets.push(after[..end].trim().to_string());
                rest = &after[end + 1..];
            }
            None => break,
        }
    }
    targets
}

/// GitHub's id for a heading's text.
fn heading_id(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The ids of every heading of a Markdown document (`#` … `######`, outside code).
fn heading_ids(text: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let mut seen: Vec<String> = Vec::new();
    for line in prose_lines_keeping_code_text(text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = heading_id(&link_texts(&line[hashes..]));
        let repeats = seen.iter().filter(|s| **s == base).count();
        seen.push(base.clone());
        ids.insert(if repeats == 0 {
            base
        } else {
            format!("{base}-{repeats}")
        });
    }
    ids
}

/// Lines outside fenced blocks with inline code kept as text (a heading's `` `name` `` is part of
/// its id), backticks dropped.
fn prose_lines_keeping_code_text(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push(line.replace('`', ""));
        }
    }
    lines
}

/// `[text](target)` → `text`, so a heading's id is made from what it shows.
fn link_texts(heading: &str) -> String {
    let mut out = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else {
            break;
        };
        let Some(close) = rest[open + mid..].find(')') else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + close + 1..];
    }
    out.push_str(rest);
    out
}

/// `base/target` without `.` and `..`; `None` if it climbs out of the repository.
fn resolve(base: &Path, target: &str) -> Option<PathBuf> {
    let mut parts: Vec<String> = Vec::new();
    for c in base.join(target).components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.iter().collect())
}

/// Every broken link of the documents, as `file:line: target (why)`.
fn broken_links() -> Vec<String> {
    let mut broken = Vec::new();
    for doc in documents() {
        let text = fs::read_to_string(root().join(&doc)).unwrap();
        let dir = doc.parent().unwrap_or(Path::new(""));
        for (n, line) in prose_lines(&text).iter().enumerate() {
            for target in link_targets(line) {
                if target.starts_with("http://")
                    || target.starts_with("https://")
                    || target.starts_with("mailto:")
                {
                    continue;
                }
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let file = if path.is_empty() {
                    Some(doc.clone())
                } else {
                    resolve(dir, path)
                };
                let at = format!("{}:{}: {target}", doc.display(), n + 1);
                let Some(file) = file else {
                    broken.push(format!("{at} (outside the repository)"));
                    continue;
                };
                let pending = PENDING_FILES.iter().any(|p| Path::new(p) == file);
                if !root().join(&file).exists() {
                    if !pending {
                        broken.push(format!("{at} (no such file: {})", file.display()));
                    }
                    continue;
                }
                if let Some(anchor) = anchor.filter(|_| file.extension().is_some_and(|e| e == "md"))
                {
                    let ids = heading_ids(&fs::read_to_string(root().join(&file)).unwrap());
                    if !ids.contains(anchor) {
                        broken.push(format!("{at} (no heading #{anchor} in {})", file.display()));
                    }
                }
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_of_the_readme_and_the_guides_resolves() {
    let broken = broken_links();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn pending_files_are_still_missing() {
    for file in PENDING_FILES {
        assert!(
            !root().join(file).exists(),
            "{file} exists now: remove it from PENDING_FILES in tests/host/doc_links.rs"
        );
    }
}

#[test]
fn heading_ids_follow_github() {
    let doc = "# Cost: size, D1 calls, set-up\n## Guests' replies\n### `owner_new_booking`\n\
               ## 7. The values in wrangler.toml\n## A — B\n```\n# not a heading\n```\n## Guests' replies\n\
               ## [Linked](x.md) text\n";
    let ids: Vec<String> = heading_ids(doc).into_iter().collect();
    assert_eq!(
        ids,
        [
            "7-the-values-in-wranglertoml",
            "a--b",
            "cost-size-d1-calls-set-up",
            "guests-replies",
            "guests-replies-1",
            "linked-text",
            "owner_new_booking",
        ]
    );
}

#[test]
fn links_in_code_are_not_links_and_broken_ones_are_found() {
    let lines = prose_lines("see [a](a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n![img](d.png)");
    let targets: Vec<String> = lines.iter().flat_map(|l| link_targets(l)).collect();
    assert_eq!(targets, ["a.md", "d.png"]);
    assert_eq!(
        resolve(Path::new("docs"), "../README.md"),
        Some(PathBuf::from("README.md"))
    );
    assert_eq!(resolve(Path::new(""), "../outside.md"), None);
}
