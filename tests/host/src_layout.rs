//! The house rules of `src/` that keep it readable, checked from the source text (the layering of
//! the top-level modules is `core_is_pure`'s):
//!
//! - no import circle between two FILES anywhere in `src/`: a file refers to another when its code
//!   before its tests names one of the other's module paths (`crate::a::b`, `super::x`, or an item
//!   of a `use crate::a::{b, c::d}` group). Two files that use each other are one concern in two
//!   places: merge them, or give the shared part a file of its own;
//! - no file longer than [`MAX_LINES`] lines before its first `#[cfg(test)]` line: split a file
//!   that grows past it by purpose;
//! - the folders of `src/domain` go in [`DOMAIN_ORDER`]: a folder names only folders before it, and
//!   only those its `mod.rs` lists on its `//! May use:` line, so that line is always true (code
//!   before the tests counts, as for circles: a test module may use what helps it test).
//!
//! A path is read textually (no name resolution): `crate::a::b::Item` counts as the file of the
//! longest module prefix that exists (`src/a/b.rs` or `src/a/b/mod.rs`, else `src/a.rs`, …).

use crate::core_is_pure::{code, rust_files, src};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;

/// Most lines a file of `src/` may have before its first `#[cfg(test)]` line.
const MAX_LINES: usize = 600;

/// The folders of `src/domain`, from the bottom up: a folder may only name folders before it.
/// `docs/code-map.md` and `src/domain/mod.rs` describe the same order.
const DOMAIN_ORDER: [&str; 14] = [
    "basics",
    "event",
    "timezone",
    "i18n",
    "email",
    "journey",
    "payment",
    "webhooks",
    "inbound",
    "admin",
    "outbox",
    "marketing",
    "sweeper",
    "render",
];

/// A module path under `src/`: `["domain", "outbox", "smtp"]` for `src/domain/outbox/smtp/mod.rs`.
type ModPath = Vec<String>;

/// One file of `src/`: its module path, its path as shown, and its text.
struct SourceFile {
    module: ModPath,
    shown: String,
    text: String,
}

fn source_files() -> Vec<SourceFile> {
    let mut paths = Vec::new();
    rust_files(&src(), &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(src()).unwrap();
            let mut module: ModPath = rel
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().to_string())
                .collect();
            if matches!(
                module.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                module.pop();
            }
            SourceFile {
                module,
                shown: format!("src/{}", rel.display()),
                text: fs::read_to_string(&path).unwrap(),
            }
        })
        .collect()
}

/// The lines of `text` before its first `#[cfg(test)]` line (at the start of a line, as rustfmt
/// writes a test module).
fn before_tests(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .take_while(|line| !line.starts_with("#[cfg(test)]"))
}

/// The identifier at the start of `s`.
fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// Reads `::a::b::{c, d::e}` after a path root: pushes `base + a::b` and, for a group, each of its
/// items (groups nest; `self` names the group's own path).
fn read_path(rest: &str, base: ModPath, out: &mut Vec<ModPath>) {
    let mut path = base;
    let mut rest = rest;
    while let Some(after) = rest.strip_prefix("::") {
        if let Some(group) = after.strip_prefix('{') {
            for item in group_items(group) {
                if item == "self" {
                    continue;
                }
                let mut segs = path.clone();
                let name = ident(item);
                if name.is_empty() {
                    continue;
                }
                segs.push(name.to_string());
                read_path(&item[name.len()..], segs, out);
            }
            break;
        }
        let name = ident(after);
        if name.is_empty() {
            break;
        }
        path.push(name.to_string());
        rest = &after[name.len()..];
    }
    out.push(path);
}

/// The items of a `{…}` group at its depth 0 (the text after its `{`), trimmed.
fn group_items(group: &str) -> Vec<&str> {
    let (mut items, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(group[start..i].trim());
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(group[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(group[start..].trim());
    items
}

/// Every module path a line of code of the file `module` names, made absolute: `crate::a::b` →
/// `a::b`; `super::x` → the parent of `module` then `x` (`super::super::x` one more up).
fn named_paths(code: &str, module: &[String]) -> Vec<ModPath> {
    let mut out = Vec::new();
    for root in ["crate", "super"] {
        for (at, _) in code.match_indices(root) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue; // part of another word, or a `super` after `super::`
            }
            let mut rest = &code[at + root.len()..];
            let mut base: ModPath = Vec::new();
            if root == "super" {
                base = module.to_vec();
                base.pop();
                while let Some(up) = rest.strip_prefix("::super") {
                    base.pop();
                    rest = up;
                }
            }
            if rest.starts_with("::") {
                read_path(rest, base, &mut out);
            }
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// The file (index) a module path names: the longest prefix of it that is a file of `src/`.
fn resolve(modules: &BTreeMap<&[String], usize>, path: &[String]) -> Option<usize> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n]).copied())
}

/// `file → files it names` (indices into `files`), from the code before each file's tests.
fn file_graph(files: &[SourceFile]) -> Vec<BTreeSet<usize>> {
    let modules: BTreeMap<&[String], usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.module.as_slice(), i))
        .collect();
    files
        .iter()
        .enumerate()
        .map(|(i, file)| {
            before_tests(&file.text)
                .flat_map(|line| named_paths(code(line), &file.module))
                .filter_map(|path| resolve(&modules, &path))
                .filter(|&to| to != i)
                .collect()
        })
        .collect()
}

/// The strongly connected sets of more than one file (Tarjan's algorithm): each is an import
/// circle.
fn circles(graph: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct Tarjan<'a> {
        graph: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in self.graph[v].iter() {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut set = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on_stack[w] = false;
                    set.push(w);
                    if w == v {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.out.push(set);
                }
            }
        }
    }
    let n = graph.len();
    let mut t = Tarjan {
        graph,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.out
}

/// The folders a `mod.rs` lists on its `//! May use:` line (and the `//!` lines continuing it).
fn may_use(text: &str) -> Option<BTreeSet<String>> {
    let docs: Vec<&str> = text
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .map(|l| l.trim_start_matches("//!").trim())
        .collect();
    let at = docs.iter().position(|l| l.starts_with("May use:"))?;
    let listed = docs[at..]
        .iter()
        .take_while(|l| !l.is_empty())
        .flat_map(|l| l.split('`').skip(1).step_by(2))
        .filter(|name| DOMAIN_ORDER.contains(name))
        .map(str::to_string)
        .collect();
    Some(listed)
}

#[test]
fn no_import_circle_between_files() {
    let files = source_files();
    assert!(files.len() > 50, "expected the files of src/");
    let found: Vec<String> = circles(&file_graph(&files))
        .into_iter()
        .map(|set| {
            set.iter()
                .map(|&i| files[i].shown.as_str())
                .collect::<Vec<_>>()
                .join(" ↔ ")
        })
        .collect();
    assert!(
        found.is_empty(),
        "files of src/ that import each other (merge the concern, or give the shared part its own \
         file):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_file_over_the_limit_before_its_tests() {
    let long: Vec<String> = source_files()
        .iter()
        .map(|f| (f, before_tests(&f.text).count()))
        .filter(|(_, n)| *n > MAX_LINES)
        .map(|(f, n)| format!("{} ({n} lines before its tests)", f.shown))
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines before their tests (split them by purpose):\n{}",
        long.join("\n")
    );
}

/// What breaks the order of the `domain` folders among `files`: a folder whose `mod.rs` lists a
/// folder not before it on its `May use:` line, or a file naming a folder its line does not list.
fn domain_offenders(files: &[SourceFile]) -> Vec<String> {
    let rank = |f: &str| DOMAIN_ORDER.iter().position(|o| *o == f);
    let mut offenders = Vec::new();
    for folder in DOMAIN_ORDER {
        let in_folder =
            |f: &&SourceFile| f.module.len() >= 2 && f.module[..2] == ["domain", folder];
        let Some(mod_rs) = files.iter().filter(in_folder).find(|f| f.module.len() == 2) else {
            continue;
        };
        let Some(listed) = may_use(&mod_rs.text) else {
            offenders.push(format!("{} has no `//! May use:` line", mod_rs.shown));
            continue;
        };
        for name in &listed {
            if rank(name) >= rank(folder) {
                offenders.push(format!(
                    "{folder} may use {name}, which does not come before it"
                ));
            }
        }
        for file in files.iter().filter(in_folder) {
            for (n, line) in before_tests(&file.text).enumerate() {
                for path in named_paths(code(line), &file.module) {
                    let named = match path.as_slice() {
                        [d, named, ..] if d == "domain" && named != folder => named,
                        _ => continue,
                    };
                    if !listed.contains(named) {
                        offenders.push(format!(
                            "{folder} names {named} (not on its May use line): {}:{}: {}",
                            file.shown,
                            n + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    offenders
}

#[test]
fn domain_folders_name_only_the_folders_they_may_use() {
    let folders: BTreeSet<String> = fs::read_dir(src().join("domain"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    let ordered: BTreeSet<String> = DOMAIN_ORDER.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        folders, ordered,
        "every folder of src/domain has its place in DOMAIN_ORDER"
    );
    let offenders = domain_offenders(&source_files());
    assert!(
        offenders.is_empty(),
        "domain folders against their order {}:\n{}",
        DOMAIN_ORDER.join(" → "),
        offenders.join("\n")
    );
}

/// The readers on made-up files: a circle is found, a chain is not, and paths resolve as written.
#[test]
fn the_layout_checks_find_what_they_look_for() {
    let file = |module: &str, text: &str| SourceFile {
        module: module.split("::").map(str::to_string).collect(),
        shown: module.to_string(),
        text: text.to_string(),
    };
    let m = |s: &str| -> ModPath { s.split("::").map(str::to_string).collect() };
    assert_eq!(
        named_paths(
            "use crate::a::{b, c::{d, self}, e::F}; super::g::h(); super::super::i::J;",
            &m("x::y::z")
        ),
        [
            m("a::b"),
            m("a::c::d"),
            m("a::c"),
            m("a::e::F"),
            m("a"),
            m("x::y::g::h"),
            m("x::i::J"),
        ]
    );
    assert!(named_paths("let supercrate = my_crate::x;", &m("a")).is_empty());

    let circle = [
        file("a", "use crate::b::Thing;"),
        file("b", "pub fn f() { crate::c::g() }"),
        file("c", "use super::a;"),
        file("d", "use crate::a;"),
    ];
    assert_eq!(circles(&file_graph(&circle)), [vec![0, 1, 2]]);
    let chain = [
        file("a", "use crate::b::Thing;"),
        file(
            "b",
            "// crate::a\n#[cfg(test)]\nmod tests { use crate::a; }",
        ),
    ];
    assert!(circles(&file_graph(&chain)).is_empty());

    assert_eq!(
        may_use("//! Lives here.\n//!\n//! May use: `basics`, `event`\n//! (and `x`).\n//!\n//! `email`\n"),
        Some(["basics", "event"].map(String::from).into())
    );
    assert_eq!(may_use("//! Nothing said.\n"), None);

    let domain = [
        file(
            "domain::basics",
            "//! May use: nothing.\nuse crate::domain::event::Id;",
        ),
        file(
            "domain::event",
            "//! May use: `basics`, `render`.\nuse super::basics::json;",
        ),
        file(
            "domain::event::ids",
            "use crate::domain::{basics::text, timezone::Zone};",
        ),
        file("domain::timezone", "//! Lives here.\n"),
    ];
    assert_eq!(
        domain_offenders(&domain),
        [
            "basics names event (not on its May use line): domain::basics:2: use crate::domain::event::Id;",
            "event may use render, which does not come before it",
            "event names timezone (not on its May use line): domain::event::ids:1: use crate::domain::{basics::text, timezone::Zone};",
            "domain::timezone has no `//! May use:` line",
        ]
    );
}
