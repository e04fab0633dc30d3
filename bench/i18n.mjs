// `node bench/i18n.mjs`: figures for the guest's language and the calendar part, printed as a
// table (and as JSON with --json). Measurements only, nothing here passes or fails.
//
//   1. size: the translation files (locales/*.ftl, raw and gzip -9); what the message library
//      (fluent-bundle) and the calendar writer (icalendar) add to a wasm32 cdylib of their own
//      — an empty library, the same with one Fluent message formatted, the same with one
//      calendar event written, each built with the Worker's release profile (opt-level "s", LTO,
//      one codegen unit) and wasm-bindgen off (raw wasm, gzip -9) — and the Worker's wasm as built
//      now (build/index_bg.wasm) when it exists;
//   2. render time per email per language: the #[ignore]d test `bench_render_time_per_language`
//      in tests/i18n_emails.rs, built with the release profile (LTO off, 16 codegen units, to keep
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
  icalendar: {
    deps: `icalendar = { version = "=${lockedVersion("icalendar")}", default-features = false }\nchrono = { version = "0.4", default-features = false, features = ["clock", "wasmbind", "std"] }`,
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
      `[package]\nname = "size_${name}"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n[lib]\ncrate-type = ["cdylib"]\n[dependencies]\n${v.deps}\n[profile.release]\nopt-level = "s"\nlto = true\ncodegen-units = 1\npanic = "abort"\n[workspace]\n`,
    );
    writeFileSync(
      join(dir, "src", "lib.rs"),
      `#[no_mangle]\npub extern "C" fn run(ptr: *const u8, len: usize, n: i64) -> usize {\n  let _ = (ptr, len, n);${v.body}\n  0\n}\n`,
    );
    const r = spawnSync(cargo, ["build", "--release", "--quiet", "--target", "wasm32-unknown-unknown"], {
      cwd: dir,
      encoding: "utf8",
      env: toolEnv({ CARGO_TARGET_DIR: target, RUSTFLAGS: "" }),
    });
    if (r.status !== 0) throw new Error(`building the ${name} size probe failed:\n${r.stdout}${r.stderr}`);
    const wasm = readFileSync(join(target, "wasm32-unknown-unknown", "release", `size_${name}.wasm`));
    wasmSizes[name] = { raw: wasm.length, gzip: gz(wasm) };
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
sizes.fluent = { raw: wasmSizes.fluent.raw - wasmSizes.empty.raw, gzip: wasmSizes.fluent.gzip - wasmSizes.empty.gzip };
sizes.icalendar = { raw: wasmSizes.icalendar.raw - wasmSizes.empty.raw, gzip: wasmSizes.icalendar.gzip - wasmSizes.empty.gzip };
const built = join(root, "build", "index_bg.wasm");
if (existsSync(built)) {
  const w = readFileSync(built);
  sizes.worker = { raw: w.length, gzip: gz(w) };
}

// 2. Render time.
const r = spawnSync(
  cargo,
  ["test", "--release", "--quiet", "--test", "i18n_emails", "bench_render_time_per_language", "--", "--ignored", "--exact", "--nocapture"],
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
    `| calendar writer (icalendar, no parser), alone in a wasm32 cdylib | ${kb(sizes.icalendar.raw)} | ${kb(sizes.icalendar.gzip)} |`,
  ];
  if (sizes.worker) lines.push(`| build/index_bg.wasm as built now | ${kb(sizes.worker.raw)} | ${kb(sizes.worker.gzip)} |`);
  lines.push("", "| language | guest emails rendered | µs per email (text + HTML + subject) | µs per calendar part |", "|---|---|---|---|");
  for (const x of render) {
    lines.push(`| ${x.locale} | ${x.emails} × ${x.rounds} | ${(x.ns_per_email / 1000).toFixed(1)} | ${(x.ns_per_calendar / 1000).toFixed(1)} |`);
  }
  return lines;
}
