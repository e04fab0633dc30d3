//! The layering of `src/`, checked from the source text:
//!
//! - the pure core (`src/domain`, `src/sources`) names no Workers type (`worker`, `js_sys`,
//!   `wasm_bindgen`, `web_sys`) and reads no clock (`Utc::now`, `SystemTime`, `Date::now`, …): it
//!   takes `now` as an argument, which is what lets `cargo test` cover it on the host;
//! - `domain` never names `crate::sources` (adapters depend on the domain, not the reverse);
//! - the shell folders below the routes (`journey`, `outbox`, `store`) never name `crate::routes`;
//! - every `crate::<module>` path goes down the layers
//!   `routes → journey → outbox → suppliers → store → platform → sources → config → domain`, so no
//!   two top-level modules import each other in a cycle (`platform` and `config` serve every shell
//!   folder above them; `suppliers`, the outbound supplier API clients, may be absent).
//!
//! The rules for files (no import circle, no file too long, the order of the `domain` folders) are
//! checked by `src_layout`.
//!
//! Only code counts: comments (including doc comments, where modules may refer to each other) are
//! stripped before a line is searched.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Top-level modules from the top layer down; a module may only name modules after it.
const LAYERS: [&str; 13] = [
    "routes",
    "inbound",
    "sweeper",
    "webhooks",
    "journey",
    "outbox",
    "publisher",
    "suppliers",
    "store",
    "platform",
    "sources",
    "config",
    "domain",
];

/// Layers that must exist (the others may be absent from a given tree).
const REQUIRED: [&str; 8] = [
    "routes", "journey", "outbox", "store", "platform", "config", "sources", "domain",
];

/// Module edges that break the layering today and are being removed by a change under way (e.g.
/// a type moving from `sources` into `domain`); empty when none is. Each entry must still
/// exist — `known_exceptions_are_still_needed` fails once it is gone, so delete it here then.
const PENDING_MOVES: &[(&str, &str)] = &[];

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

pub(crate) fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The files of a top-level module: `src/<name>/**.rs` or `src/<name>.rs`.
fn module_files(name: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let dir = src().join(name);
    if dir.is_dir() {
        rust_files(&dir, &mut files);
    }
    let file = src().join(format!("{name}.rs"));
    if file.is_file() {
        files.push(file);
    }
    files
}

/// The code of a line: everything before a `//` comment (a `://` inside a URL is not one).
pub(crate) fn code(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut i = 0;
    while let Some(at) = line[i..].find("//") {
        let at = i + at;
        if at == 0 || bytes[at - 1] != b':' {
            return &line[..at];
        }
        i = at + 2;
    }
    line
}

/// `(file:line: text, code)` for every line of code of `files`.
fn code_lines(files: &[PathBuf]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for file in files {
        let text = fs::read_to_string(file).unwrap();
        let shown = file
            .strip_prefix(src())
            .unwrap_or(file)
            .display()
            .to_string();
        for (n, line) in text.lines().enumerate() {
            let code = code(line);
            if !code.trim().is_empty() {
                out.push((
                    format!("src/{shown}:{}: {}", n + 1, line.trim()),
                    code.to_string(),
                ));
            }
        }
    }
    out
}

/// The top-level modules a line of code names through `crate::…` (also `crate::{a, b::c}`).
fn named_modules(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The first name of each item at depth 0 of the group.
            let (mut depth, mut item_start) = (0, true);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    _ if item_start && !c.is_whitespace() => {
                        found.insert(ident(&group[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            found.insert(ident(rest));
        }
    }
    found.retain(|m| !m.is_empty() && m != "self");
    found
}

/// Lines of `files` whose code contains one of `needles`.
fn offending(files: &[PathBuf], needles: &[&str]) -> Vec<String> {
    code_lines(files)
        .into_iter()
        .filter(|(_, code)| needles.iter().any(|n| code.contains(n)))
        .map(|(shown, _)| shown)
        .collect()
}

fn core_files() -> Vec<PathBuf> {
    let files: Vec<PathBuf> = ["domain", "sources"]
        .iter()
        .flat_map(|m| module_files(m))
        .collect();
    assert!(
        files.len() >= 5,
        "expected the core modules, found {files:?}"
    );
    files
}

/// `module → (named module → the first line naming it)`, for the top-level modules of `src/`.
fn module_graph() -> BTreeMap<String, BTreeMap<String, String>> {
    let mut graph = BTreeMap::new();
    for module in LAYERS {
        let files = module_files(module);
        if files.is_empty() {
            assert!(!REQUIRED.contains(&module), "module {module} has no files");
            continue;
        }
        let mut edges: BTreeMap<String, String> = BTreeMap::new();
        for (shown, code) in code_lines(&files) {
            for named in named_modules(&code) {
                if named != module {
                    edges.entry(named).or_insert_with(|| shown.clone());
                }
            }
        }
        graph.insert(module.to_string(), edges);
    }
    graph
}

#[test]
fn core_modules_do_not_import_the_runtime() {
    let offenders = offending(
        &core_files(),
        &[
            "worker::",
            "use worker",
            "js_sys",
            "wasm_bindgen",
            "web_sys",
        ],
    );
    assert!(
        offenders.is_empty(),
        "the pure core imports the runtime:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn core_modules_read_no_clock() {
    let offenders = offending(
        &core_files(),
        &[
            "Utc::now",
            "Local::now",
            "SystemTime",
            "Instant::now",
            "Date::now",
        ],
    );
    assert!(
        offenders.is_empty(),
        "the pure core reads a clock (take `now` as an argument instead):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn domain_does_not_name_the_adapters() {
    if PENDING_MOVES.contains(&("domain", "sources")) {
        // Pending: see PENDING_MOVES (checked by `known_exceptions_are_still_needed`).
        return;
    }
    let offenders = offending(&module_files("domain"), &["crate::sources"]);
    assert!(
        offenders.is_empty(),
        "domain names the supplier adapters:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn shell_below_the_routes_does_not_name_them() {
    let files: Vec<PathBuf> = ["journey", "outbox", "store"]
        .iter()
        .flat_map(|m| module_files(m))
        .collect();
    let offenders = offending(&files, &["crate::routes"]);
    assert!(
        offenders.is_empty(),
        "journey/outbox/store reach into the routes:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn every_module_is_in_a_layer() {
    let mut modules: BTreeSet<String> = BTreeSet::new();
    for entry in fs::read_dir(src()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() || (path.extension().is_some_and(|e| e == "rs") && name != "lib") {
            modules.insert(name);
        }
    }
    let unknown: Vec<&String> = modules
        .iter()
        .filter(|m| !LAYERS.contains(&m.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "top-level modules without a layer (add them to LAYERS): {unknown:?}"
    );
}

#[test]
fn modules_only_name_the_layers_below() {
    let layer = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut offenders = Vec::new();
    for (module, edges) in module_graph() {
        for (named, shown) in edges {
            if PENDING_MOVES.contains(&(module.as_str(), named.as_str())) {
                continue;
            }
            match (layer(&module), layer(&named)) {
                (Some(a), Some(b)) if a < b => {}
                (_, None) => {} // not a top-level module (e.g. a re-export at the crate root)
                _ => offenders.push(format!("{module} → {named}: {shown}")),
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "imports against the layering {}:\n{}",
        LAYERS.join(" → "),
        offenders.join("\n")
    );
}

#[test]
fn module_folders_import_no_cycle() {
    let graph = module_graph();
    let edges = |m: &str| -> Vec<String> {
        graph[m]
            .keys()
            .filter(|n| graph.contains_key(*n))
            .filter(|n| !PENDING_MOVES.contains(&(m, n.as_str())))
            .cloned()
            .collect()
    };
    // Depth-first search; `path` is the current chain, so a repeat on it is a cycle.
    fn visit(
        m: &str,
        edges: &dyn Fn(&str) -> Vec<String>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut cycle = path[i..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if !done.insert(m.to_string()) {
            return None;
        }
        path.push(m.to_string());
        for n in edges(m) {
            if let Some(cycle) = visit(&n, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        if let Some(cycle) = visit(m, &edges, &mut Vec::new(), &mut done) {
            panic!("module folders import in a cycle: {}", cycle.join(" → "));
        }
    }
}

#[test]
fn known_exceptions_are_still_needed() {
    let graph = module_graph();
    for (from, to) in PENDING_MOVES {
        assert!(
            graph[*from].contains_key(*to),
            "{from} no longer names {to}: delete ({from:?}, {to:?}) from PENDING_MOVES"
        );
    }
}

#[test]
fn the_checks_see_imports_and_skip_comments() {
    assert_eq!(code("let x = 1; // crate::routes"), "let x = 1; ");
    assert_eq!(code("//! `crate::routes`"), "");
    assert_eq!(
        code("let u = \"https://x.test\"; // c"),
        "let u = \"https://x.test\"; "
    );
    let named = named_modules("use crate::{domain::event, store::{self, x}}; crate::platform::now");
    assert_eq!(
        named.into_iter().collect::<Vec<_>>(),
        ["domain", "platform", "store"]
    );
}
