// `node bench/i18n.mjs`: figures for the guest's language and the calendar part, printed as a
// table (and as JSON with --json). Measurements only, nothing here passes or fails.
//
//   1. size: the translation files (locales/*.ftl, raw and gzip -9); what the message library
//      (fluent-bundle) adds to a wasm32 cdylib of its own, next to two options measured and not
//      kept (rust-i18n, the icalendar crate)
//      — each probe against an empty library (both linking chrono as the Worker does), built with
//      the Worker's release profile (opt-level "z", LTO, one codegen unit), wasm-bindgen off (raw
//      wasm, gzip -9) — and the Worker's wasm as built now (build/index_bg.wasm) next to the
//      Worker before these features (measured once, commit c1d9b2b);
//   2. render time per email per language: the #[ignore]d test `bench_render_time_per_language`
//      in tests/host/i18n_emails.rs, built with the release profile (LTO off, 16 codegen units, to keep
//      the build short), every guest email kind rendered in each of the six languages.
//
// Knobs: I18N_BENCH_ROUNDS (rounds per language, default 200), CARGO_TARGET_DIR (as for cargo).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { root, cargoBin, toolEnv } from "../scripts/lib.mjs";

const gz = (buf) => gzipSync(buf, { level: 9 }).length;
// The Worker's wasm at commit c1d9b2b (before the guest's language and the calendar part), built
// with `npm run build`, gzip -9. Not rebuilt here.
const BEFORE = { raw: 4_414_410, gzip: 1_427_478 };
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
const cargo = join(cargoBin, "cargo");

// 1a. Translation files.
const locales = readdirSync(join(root, "locales")).filter((f) => f.endsWith(".ftl")).sort();
const ftl = Buffer.concat(locales.map((f) => readFileSync(join(root, "locales", f))));
const sizes = { locales: locales.length, ftlRaw: ftl.length, ftlGzip: gz(ftl) };

// 1b. The libraries alone, in three tiny cdylibs sharing one target folder.
function lockedVersion(name) {
  const lock = readFileSync(join(root, "Cargo.lock"), "utf8");
  const m = new RegExp(`name = "${name}"\\nversion = "([^"]+)"`).exec(lock);
  if (!m) throw new Error(`${name} is not in Cargo.lock`);
  return m[1];
}
// Every probe links chrono as the Worker does (clock + wasmbind) and uses it, so a library's figure
// is its own code, not chrono's.
const CHRONO = `chrono = { version = "0.4", default-features = false, features = ["clock", "wasmbind", "std"] }`;
const variants = {
  empty: { deps: "", body: "" },
  fluent: {
    deps: `fluent-bundle = "=${lockedVersion("fluent-bundle")}"\nunic-langid = "=${lockedVersion("unic-langid")}"`,
    body: `
      let lang: unic_langid::LanguageIdentifier = "es".parse().unwrap();
      let mut b = fluent_bundle::FluentBundle::new(vec![lang]);
      b.set_use_isolating(false);
      let src = unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len)) };
      let r = fluent_bundle::FluentResource::try_new(src.to_string()).unwrap_or_else(|(r, _)| r);
      let _ = b.add_resource(r);
      let mut args = fluent_bundle::FluentArgs::new();
      args.set("count", n);
      let m = b.get_message("m").and_then(|m| m.value()).unwrap();
      let mut errors = vec![];
      return b.format_pattern(m, Some(&args), &mut errors).len();`,
  },
  // A lighter maintained option for comparison: rust-i18n (YAML files compiled into a lookup
  // table, `%{name}` interpolation, no plural rules or number formatting).
  "rust-i18n": {
    deps: `rust-i18n = "4"`,
    files: { "locales/app.yml": "m:\n  es: \"%{count} noches\"\n" },
    head: `rust_i18n::i18n!("locales");`,
    body: `
      let src = unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len)) };
      return rust_i18n::t!("m", locale = src, count = n).len();`,
  },
  icalendar: {
    // Measured for the record, not used: the Worker writes its calendar parts itself
    // (src/domain/email/calendar.rs says why).
    deps: `icalendar = { version = "=0.17.17", default-features = false }`,
    body: `
      use icalendar::{Component, EventLike};
      let src = unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len)) };
      let d = chrono::NaiveDate::from_ymd_opt(2026, 6, n as u32 % 28 + 1).unwrap();
      let mut e = icalendar::Event::new();
      e.uid(src).summary(src).sequence(n as u32).starts(d).ends(d.succ_opt().unwrap());
      e.timestamp(chrono::DateTime::from_timestamp(n, 0).unwrap());
      let mut c = icalendar::Calendar::empty();
      c.push(e.done());
      return c.done().to_string().len();`,
  },
};
const work = mkdtempSync(join(tmpdir(), "i18n-bench-"));
const target = join(work, "target");
const wasmSizes = {};
try {
  for (const [name, v] of Object.entries(variants)) {
    const dir = join(work, name);
    mkdirSync(join(dir, "src"), { recursive: true });
    writeFileSync(
      join(dir, "Cargo.toml"),
      `[package]\nname = "size_${name}"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n[lib]\ncrate-type = ["cdylib"]\n[dependencies]\n${CHRONO}\n${v.deps}\n[profile.release]\nopt-level = "z"\nlto = true\ncodegen-units = 1\npanic = "abort"\n[workspace]\n`,
    );
    for (const [file, text] of Object.entries(v.files ?? {})) {
      mkdirSync(join(dir, file, ".."), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    writeFileSync(
      join(dir, "src", "lib.rs"),
      `${v.head ?? ""}\n#[no_mangle]\npub extern "C" fn run(ptr: *const u8, len: usize, n: i64) -> usize {\n  let _ = (ptr, len, n);\n  let now = chrono::Utc::now().timestamp() as usize;${v.body}\n  #[allow(unreachable_code)]\n  now\n}\n`,
    );
    const r = spawnSync(cargo, ["build", "--release", "--quiet", "--target", "wasm32-unknown-unknown"], {
      cwd: dir,
      encoding: "utf8",
      env: toolEnv({ CARGO_TARGET_DIR: target, RUSTFLAGS: "" }),
    });
    if (r.status !== 0) throw new Error(`building the ${name} size probe failed:\n${r.stdout}${r.stderr}`);
    const wasm = readFileSync(join(target, "wasm32-unknown-unknown", "release", `size_${name.replace(/-/g, "_")}.wasm`));
    wasmSizes[name] = { raw: wasm.length, gzip: gz(wasm) };
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
sizes.fluent = { raw: wasmSizes.fluent.raw - wasmSizes.empty.raw, gzip: wasmSizes.fluent.gzip - wasmSizes.empty.gzip };
sizes.rustI18n = { raw: wasmSizes["rust-i18n"].raw - wasmSizes.empty.raw, gzip: wasmSizes["rust-i18n"].gzip - wasmSizes.empty.gzip };
sizes.icalendar = { raw: wasmSizes.icalendar.raw - wasmSizes.empty.raw, gzip: wasmSizes.icalendar.gzip - wasmSizes.empty.gzip };
const built = join(root, "build", "index_bg.wasm");
if (existsSync(built)) {
  const w = readFileSync(built);
  sizes.worker = { raw: w.length, gzip: gz(w) };
}

// 2. Render time.
const r = spawnSync(
  cargo,
  ["test", "--release", "--quiet", "--test", "host", "i18n_emails::bench_render_time_per_language", "--", "--ignored", "--exact", "--nocapture"],
  {
    cwd: root,
    encoding: "utf8",
    env: toolEnv({ CARGO_PROFILE_RELEASE_LTO: "false", CARGO_PROFILE_RELEASE_CODEGEN_UNITS: "16" }),
    maxBuffer: 64 * 1024 * 1024,
  },
);
if (r.status !== 0) {
  process.stderr.write(r.stdout + r.stderr);
  throw new Error(`cargo test exited with ${r.status}`);
}
const render = r.stdout
  .split("\n")
  .filter((l) => l.startsWith("I18NBENCH "))
  .map((l) => JSON.parse(l.slice(10)));

const result = { sizes, render };
if (process.argv.includes("--json")) {
  console.log(JSON.stringify(result, null, 2));
} else {
  console.log(table(result).join("\n"));
}

/** The markdown table of a result (also used by bench/run.mjs). */
function table({ sizes, render }) {
  const lines = [
    "| figure | raw | gzip -9 |",
    "|---|---|---|",
    `| translations (${sizes.locales} files locales/*.ftl, compiled into the Worker as text) | ${kb(sizes.ftlRaw)} | ${kb(sizes.ftlGzip)} |`,
    `| message library (fluent-bundle + unic-langid + CLDR plural rules), alone in a wasm32 cdylib | ${kb(sizes.fluent.raw)} | ${kb(sizes.fluent.gzip)} |`,
    `| for comparison: rust-i18n (YAML lookup, no plurals, no number formats), alone in a wasm32 cdylib | ${kb(sizes.rustI18n.raw)} | ${kb(sizes.rustI18n.gzip)} |`,
    `| for comparison: the icalendar 0.17.17 crate (no parser), not used — the Worker's own writer is src/domain/email/calendar.rs | ${kb(sizes.icalendar.raw)} | ${kb(sizes.icalendar.gzip)} |`,
  ];
  lines.push(`| Worker wasm before the guest's language and calendar (c1d9b2b, measured once) | ${kb(BEFORE.raw)} | ${kb(BEFORE.gzip)} |`);
  if (sizes.worker) {
    lines.push(`| build/index_bg.wasm as built now | ${kb(sizes.worker.raw)} | ${kb(sizes.worker.gzip)} |`);
    lines.push(`| difference (includes every change since c1d9b2b) | ${kb(sizes.worker.raw - BEFORE.raw)} | ${kb(sizes.worker.gzip - BEFORE.gzip)} |`);
  }
  lines.push("", "| language | guest emails rendered | µs per email (text + HTML + subject) | µs per calendar part |", "|---|---|---|---|");
  for (const x of render) {
    lines.push(`| ${x.locale} | ${x.emails} × ${x.rounds} | ${(x.ns_per_email / 1000).toFixed(1)} | ${(x.ns_per_calendar / 1000).toFixed(1)} |`);
  }
  return lines;
}
