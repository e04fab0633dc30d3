//! The tables the code owns are written in one place each, and the code is their source: these
//! tests fail when the code reads a configuration variable that `docs/operating.md`'s
//! configuration reference does not list, sends an owner alert kind (or records a repair kind)
//! that `docs/runbook.md` does not describe, renders a daily digest line the runbook's digest table
//! does not have, refuses under the production guard a variable its table does not name, or has a provider refusal class that
//! `docs/internals.md`'s classification table does not have — and when a guide describes one the
//! code no longer has. The lists come from the code itself: the variables from running the
//! configuration's parsers with a lookup that records every name it is asked for, the kinds from
//! the enums.

use booking_email_engine::config::Config;
use booking_email_engine::domain::email::{Audience, EmailKind};
use booking_email_engine::domain::outbox::ProviderErrorClass;
use booking_email_engine::domain::sweeper::digest::{DigestDay, DigestFacts};
use booking_email_engine::domain::sweeper::{RepairKind, SweepConfig};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::PathBuf;
use strum::VariantArray;

fn read(path: &str) -> String {
    let full = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The lines of `doc` under the heading line `heading`, up to the next heading of the same or a
/// higher level (fenced code is not searched for headings).
fn section<'a>(doc: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let mut lines = doc.lines().skip_while(|l| *l != heading);
    assert!(lines.next().is_some(), "no heading {heading:?}");
    let mut fenced = false;
    lines
        .take_while(|l| {
            if l.starts_with("```") {
                fenced = !fenced;
            }
            let hashes = l.chars().take_while(|c| *c == '#').count();
            fenced || hashes == 0 || hashes > level
        })
        .collect()
}

/// The `` `names` `` in the first cell of every table row of `lines` (header rows, which a
/// `|---` line follows, left out), in order.
fn first_cell_names(lines: &[&str]) -> Vec<String> {
    let mut names = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let header = lines.get(i + 1).is_some_and(|n| n.starts_with("|---"));
        if !line.starts_with("| ") || header || line.starts_with("|---") {
            continue;
        }
        let cell = line[1..].split('|').next().unwrap_or_default();
        names.extend(cell.split('`').skip(1).step_by(2).map(str::to_string));
    }
    names
}

/// Panics with `disagreement`'s message when the guide and the code disagree.
fn assert_agree(what: &str, guide: &str, code: &BTreeSet<String>, documented: &[String]) {
    if let Some(e) = disagreement(what, guide, code, documented) {
        panic!("{e}");
    }
}

/// The first cells of the table under `heading` in the guide `path` name exactly `code`'s items.
fn assert_table_agrees(what: &str, path: &str, heading: &str, code: &BTreeSet<String>) {
    let documented = first_cell_names(&section(&read(path), heading));
    let guide = format!("{path} ({})", heading.trim_start_matches('#').trim());
    assert_agree(what, &guide, code, &documented);
}

/// Both differences between what the code has and what a guide says, as a failure message
/// (`None` when they agree).
fn disagreement(
    what: &str,
    guide: &str,
    code: &BTreeSet<String>,
    documented: &[String],
) -> Option<String> {
    let documented_set: BTreeSet<String> = documented.iter().cloned().collect();
    let missing: Vec<&String> = code.difference(&documented_set).collect();
    let stale: Vec<&String> = documented_set.difference(code).collect();
    let twice: BTreeSet<&String> = documented
        .iter()
        .filter(|n| documented.iter().filter(|m| m == n).count() > 1)
        .collect();
    (!missing.is_empty() || !stale.is_empty() || !twice.is_empty()).then(|| {
        format!(
            "{what}: in the code but not in {guide}: {missing:?}; in {guide} but not in the code: \
             {stale:?}; in {guide} more than once: {twice:?}"
        )
    })
}

/// Every variable the Worker's configuration reads: the names `Config::parse` and the sweeper's
/// `SweepConfig::from_vars` ask their lookup for, under a configuration that takes each branch
/// that reads more (an SMTP relay with credentials, Resend as the main provider).
fn variables_read() -> BTreeSet<String> {
    let asked = RefCell::new(BTreeSet::new());
    let given = [
        ("OWNER_EMAIL", "owner@example.com"),
        ("SENDER_EMAIL", "bookings@example.com"),
        ("SMTP_HOST", "smtp.example.com"),
        ("SMTP_USERNAME", "user"),
        ("SMTP_PASSWORD", "password"),
        ("MAIN_PROVIDER", "resend"),
        ("RESEND_API_KEY", "re_example"),
    ];
    let lookup = |name: &str| {
        asked.borrow_mut().insert(name.to_string());
        given
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    };
    Config::parse(lookup).expect("the configuration parses");
    SweepConfig::from_vars(lookup).expect("the sweeper's configuration parses");
    asked.into_inner()
}

#[test]
fn the_configuration_reference_lists_every_variable_the_code_reads() {
    assert_table_agrees(
        "configuration variables",
        "docs/operating.md",
        "## Configuration reference",
        &variables_read(),
    );
}

/// Source files that read the Worker's environment (`env.var`, `env.secret`): the configuration
/// (`Config::parse` through `platform::config`) and the sweeper (`SweepConfig::from_vars`), the
/// two parsers [`variables_read`] runs. A new reader must be added there too.
const ENV_READERS: [&str; 2] = ["src/platform/mod.rs", "src/sweeper/mod.rs"];

#[test]
fn only_the_configuration_parsers_read_the_environment() {
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(&root.join("src"), &mut files);
    let mut readers = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let reads = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or_default())
            .any(|code| code.contains(".var(") || code.contains(".secret("));
        if reads {
            let rel = file.strip_prefix(&root).unwrap();
            readers.insert(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    let expected: BTreeSet<String> = ENV_READERS.iter().map(|s| s.to_string()).collect();
    assert_eq!(readers, expected, "files that read env vars or secrets");
}

/// The `NAME = …` keys of `wrangler.toml`'s `[vars]` table.
fn wrangler_vars() -> Vec<String> {
    let toml = read("wrangler.toml");
    let mut in_vars = false;
    let mut names = Vec::new();
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            in_vars = line == "[vars]";
        } else if in_vars && !line.starts_with('#') {
            if let Some((name, _)) = line.split_once('=') {
                names.push(name.trim().to_string());
            }
        }
    }
    names
}

#[test]
fn every_variable_wrangler_toml_and_the_dev_vars_example_set_is_read() {
    let read_by_code = variables_read();
    let example = read(".dev.vars.example");
    let dev_vars = example
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('=').map(|(n, _)| n.trim().to_string()));
    let unread: Vec<String> = wrangler_vars()
        .into_iter()
        .chain(dev_vars)
        .filter(|n| !read_by_code.contains(n))
        .collect();
    assert!(unread.is_empty(), "set but read by no code: {unread:?}");
    assert!(
        wrangler_vars().len() > 50,
        "wrangler.toml's [vars] were not found"
    );
}

/// The `### `owner_…`` headings of the runbook's owner alerts.
fn runbook_alerts(doc: &str) -> Vec<String> {
    section(doc, "## Owner alerts")
        .iter()
        .filter_map(|l| l.strip_prefix("### `"))
        .filter_map(|l| l.strip_suffix('`'))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_runbook_describes_every_owner_alert_kind() {
    let owner_kinds: BTreeSet<String> = EmailKind::ALL
        .into_iter()
        .filter(|k| k.audience() == Audience::Owner)
        .map(|k| k.as_str().to_string())
        .collect();
    assert!(owner_kinds.len() >= 10, "{owner_kinds:?}");
    let doc = read("docs/runbook.md");
    assert_agree(
        "owner alert kinds",
        "docs/runbook.md (Owner alerts)",
        &owner_kinds,
        &runbook_alerts(&doc),
    );
}

/// Every repair kind, as the enum lists its variants.
fn repair_kinds() -> BTreeSet<String> {
    RepairKind::VARIANTS
        .iter()
        .map(|k| k.as_str().to_string())
        .collect()
}

#[test]
fn the_runbook_describes_every_repair_kind_of_the_digest() {
    assert_table_agrees(
        "repair kinds",
        "docs/runbook.md",
        "### Repairs the engine made by itself",
        &repair_kinds(),
    );
}

/// The section titles of a daily digest in which every section has something to say, each count
/// written `<n>` (e.g. `Routes paused: <n>`).
fn digest_lines() -> BTreeSet<String> {
    use booking_email_engine::domain::event::EmailAddress;
    use booking_email_engine::domain::i18n::{Locale, Region};
    use booking_email_engine::domain::render::{owner_digest, Branding};
    use booking_email_engine::domain::timezone::HotelZone;
    let facts = DigestFacts {
        bookings: 1,
        emails_sent: 1,
        emails_failed: 1,
        emails_stale: 1,
        dead_letters: 1,
        refunds_waiting: 1,
        holds_open: 1,
        webhooks_dead: 1,
        repairs: 1,
        routes_paused: vec!["SMTP failover paused until 2027-01-15 10:00 UTC".into()],
        conversations_waiting: 1,
        ..DigestFacts::default()
    };
    let day = DigestDay {
        sent_on: "2027-01-15".into(),
        covers: "2027-01-14".into(),
        from_ms: 1_799_884_800_000,
        to_ms: 1_799_971_200_000,
    };
    let owner = EmailAddress::parse("owner@example.com").unwrap();
    let branding = Branding {
        brand: "Example Trips".into(),
        from: EmailAddress::parse("bookings@mail.example.com").unwrap(),
        locale: Locale::En,
        region: Region::DEFAULT,
    };
    let zone = HotelZone::parse("Europe/Madrid").unwrap();
    let email = owner_digest(
        &day,
        &facts,
        &zone,
        "https://x.example",
        booking_email_engine::domain::render::OwnerInbox::new(&owner, &branding),
    )
    .unwrap();
    email
        .text
        .lines()
        .filter(|l| !l.starts_with(' ') && l.contains(": 1"))
        .map(|l| l.replace(": 1", ": <n>").replace(", 1 ", ", <n> "))
        .collect()
}

#[test]
fn the_runbook_describes_every_line_of_the_daily_digest() {
    let lines = digest_lines();
    assert!(lines.len() >= 9, "{lines:?}");
    let doc = read("docs/runbook.md");
    let documented: Vec<String> = first_cell_names(&section(&doc, "## The daily digest"))
        .into_iter()
        .filter(|n| n.contains(": <")) // the repair kinds' table below it names no count
        .map(|n| {
            // `<a>`, `<b>`, `<n>`: any count.
            let mut out = String::new();
            let mut rest = n.as_str();
            while let Some(open) = rest.find('<') {
                let close = rest[open..].find('>').map_or(rest.len(), |c| open + c + 1);
                out.push_str(&rest[..open]);
                out.push_str("<n>");
                rest = &rest[close..];
            }
            out + rest
        })
        .collect();
    assert_agree(
        "daily digest lines",
        "docs/runbook.md (The daily digest)",
        &lines,
        &documented,
    );
}

/// Every provider refusal class (as the enum lists its variants) by its stored (serde) name.
fn refusal_classes() -> BTreeSet<String> {
    ProviderErrorClass::VARIANTS
        .iter()
        .map(|c| match serde_json::to_value(c).unwrap() {
            serde_json::Value::String(name) => name,
            other => panic!("{c:?} is stored as {other}"),
        })
        .collect()
}

#[test]
fn the_classification_table_has_every_refusal_class() {
    let doc = read("docs/internals.md");
    let lines = section(&doc, "## Outbox: failures, retries, dead letters");
    // The classification table is the section's first table; later tables classify replies.
    let table: Vec<&str> = lines
        .iter()
        .copied()
        .skip_while(|l| !l.starts_with("| class"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(
        !table.is_empty(),
        "no table starting `| class` in the outbox section"
    );
    assert_agree(
        "provider refusal classes",
        "docs/internals.md (the classification table)",
        &refusal_classes(),
        &first_cell_names(&table),
    );
}

/// The first ```json block of `lines` (Markdown, or Rust module docs: `//! ` is dropped first).
fn json_block(lines: &[&str]) -> serde_json::Value {
    let block: Vec<&str> = lines
        .iter()
        .map(|l| {
            l.strip_prefix("//!")
                .map_or(*l, |d| d.strip_prefix(' ').unwrap_or(d))
        })
        .skip_while(|l| l.trim() != "```json")
        .skip(1)
        .take_while(|l| l.trim() != "```")
        .collect();
    serde_json::from_str(&block.join("\n")).expect("a ```json block")
}

#[test]
fn the_generic_source_example_is_the_one_the_code_documents_and_parses() {
    let guide = read("docs/suppliers.md");
    let guide_example = json_block(&section(
        &guide,
        "## The generic source (suppliers without an adapter)",
    ));
    let source = read("src/sources/generic.rs");
    let module_docs: Vec<&str> = source
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .collect();
    assert_eq!(guide_example, json_block(&module_docs));
}

#[test]
fn the_helpers_find_what_they_are_for() {
    let doc = "# T\n## A\n| name | x |\n|---|---|\n| `ONE`, `TWO` | `not me` |\n\
               ```\n## not a heading\n```\n### inside\n| `THREE` | y |\n## B\n| `FOUR` | z |\n";
    let names = first_cell_names(&section(doc, "## A"));
    assert_eq!(names, ["ONE", "TWO", "THREE"]);
    let code: BTreeSet<String> = ["ONE", "TWO", "FIVE"].map(String::from).into();
    let e = disagreement("x", "the guide", &code, &names).unwrap();
    assert!(e.contains(r#"not in the guide: ["FIVE"]"#), "{e}");
    assert!(e.contains(r#"not in the code: ["THREE"]"#), "{e}");
    assert!(disagreement("x", "g", &code, &["ONE", "TWO", "FIVE"].map(String::from)).is_none());
    let twice = ["ONE", "TWO", "FIVE", "ONE"].map(String::from);
    assert!(disagreement("x", "g", &code, &twice)
        .unwrap()
        .contains("more than once"));
}

/// The variables the production guard refuses when an engine without `ENGINE_ENV` runs on every
/// value of `.dev.vars.example` (the published ones), with SMTP credentials sent in clear to a
/// remote relay and a loopback `PUBLIC_BASE_URL`.
fn guard_refusals() -> BTreeSet<String> {
    let example = read(".dev.vars.example");
    let mut given: Vec<(String, String)> = example
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .filter(|(n, _)| !n.starts_with("ENGINE_ENV") && !n.starts_with("SMTP_"))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    given.extend(
        [
            ("OWNER_EMAIL", "owner@example.com"),
            ("SENDER_EMAIL", "bookings@example.com"),
            ("SMTP_HOST", "smtp.example.com"),
            ("SMTP_TLS", "off"),
            ("SMTP_USERNAME", "user"),
            ("SMTP_PASSWORD", "password"),
        ]
        .map(|(n, v)| (n.to_string(), v.to_string())),
    );
    let config = Config::parse(|name: &str| {
        given
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    })
    .expect("the configuration parses");
    config
        .refused
        .iter()
        .map(|r| r.variable.to_string())
        .collect()
}

#[test]
fn the_production_guard_table_names_every_variable_the_guard_refuses() {
    let refused = guard_refusals();
    assert!(refused.contains("PUBLIC_BASE_URL"), "{refused:?}");
    assert_table_agrees(
        "variables the production guard refuses",
        "docs/operating.md",
        "## Production guard",
        &refused,
    );
}
