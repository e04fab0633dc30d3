// The production configuration the deploy guide describes, deployed as a dry run. docs/operating.md
// ("The production values in wrangler.toml") lists, in one TOML block after the marker
// `<!-- production-values … -->`, exactly the values an operator changes in wrangler.toml before the
// first real deploy. This script applies that block to wrangler.toml (each key must already be set
// in exactly one table of the same header there, so the block cannot name a table or key the
// configuration no longer has), writes the result next to wrangler.toml and runs
// `wrangler deploy --dry-run` on it: wrangler validates the configuration and bundles the upload
// offline, nothing is sent (https://developers.cloudflare.com/workers/wrangler/commands/#deploy).
// Run by scripts/test.mjs after the build; alone: `node scripts/production-check.mjs`.
//
// Own line-based editing instead of a TOML library: the block holds only `[table]` /
// `[[table]]` headers and `key = "string"` lines, and the edit keeps wrangler.toml's comments and
// layout, which a parse-and-print round trip would drop.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { root, nodeBin, toolEnv } from "./lib.mjs";

const MARKER = "<!-- production-values";

/**
 * The guide's production block as settings.
 * @param {string} guide the text of docs/operating.md
 * @returns {{ header: string, key: string, value: string }[]} in the block's order; `value` is the
 *   TOML literal as written (a quoted string), without its trailing comment.
 * @throws when the marker, its ```toml block or a line of a form other than the two above is missing.
 */
export function productionValues(guide) {
  const at = guide.indexOf(MARKER);
  if (at < 0) throw new Error(`docs/operating.md has no "${MARKER}" marker`);
  const lines = guide.slice(at).split("\n");
  const open = lines.findIndex((l) => l.trim() === "```toml");
  if (open < 0 || open > 2) throw new Error("no ```toml block right after the production-values marker");
  const settings = [];
  let header = null;
  for (const raw of lines.slice(open + 1)) {
    const line = raw.trim();
    if (line === "```") return settings;
    if (line === "" || line.startsWith("#")) continue;
    if (/^\[\[?[A-Za-z0-9_.]+\]\]?$/.test(line)) {
      header = line;
      continue;
    }
    const m = /^([A-Za-z0-9_]+)\s*=\s*("(?:[^"\\]|\\.)*")\s*(#.*)?$/.exec(line);
    if (!m || !header) throw new Error(`production values: not a "key = \\"value\\"" line under a table: ${raw}`);
    settings.push({ header, key: m[1], value: m[2] });
  }
  throw new Error("the production values' ```toml block is not closed");
}

/**
 * `wrangler` (the text of wrangler.toml) with `settings` applied.
 * @throws when a setting's key is set in no table of its header, or in more than one.
 */
export function applyValues(wrangler, settings) {
  const lines = wrangler.split("\n");
  for (const { header, key, value } of settings) {
    const hits = [];
    let current = null;
    lines.forEach((raw, i) => {
      const line = raw.trim();
      if (line.startsWith("[")) current = line;
      else if (current === header && new RegExp(`^${key}\\s*=`).test(line)) hits.push(i);
    });
    if (hits.length !== 1) {
      throw new Error(`wrangler.toml sets ${key} in ${hits.length} tables ${header}; the guide's production values need exactly one`);
    }
    lines[hits[0]] = `${key} = ${value}`;
  }
  return lines.join("\n");
}

/**
 * Dry-runs the deploy of the guide's production configuration.
 * @returns {{ gzipKiB: number, settings: number }}
 * @throws when the block does not apply, wrangler fails, or its output does not show the values.
 */
export function checkProductionConfig() {
  const settings = productionValues(readFileSync(join(root, "docs", "operating.md"), "utf8"));
  const config = applyValues(readFileSync(join(root, "wrangler.toml"), "utf8"), settings);
  // Next to wrangler.toml: `main`, `migrations_dir` and `[build]` are relative to the config file.
  const configPath = join(root, ".wrangler.production-check.toml");
  const outdir = mkdtempSync(join(tmpdir(), "engine-production-dry-run-"));
  writeFileSync(configPath, config);
  try {
    const r = spawnSync(
      join(nodeBin, "wrangler"),
      ["deploy", "--dry-run", "--config", configPath, "--outdir", outdir],
      { cwd: root, env: { ...toolEnv(), WRANGLER_SEND_METRICS: "false" }, encoding: "utf8", timeout: 180_000 },
    );
    const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
    if (r.status !== 0) throw new Error(`wrangler deploy --dry-run exited with ${r.status}:\n${out.slice(-3000)}`);
    const m = /Total Upload:\s*[\d.]+\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(out);
    if (!m) throw new Error(`wrangler deploy --dry-run printed no "Total Upload" line:\n${out.slice(-3000)}`);
    // wrangler lists the bindings it would deploy, vars with their values: each var of the block
    // must be there as the guide gives it.
    for (const { header, key, value } of settings) {
      if (header !== "[vars]") continue;
      const shown = `env.${key} (${value})`;
      if (!out.includes(shown)) throw new Error(`the dry run does not show ${key} = ${value}:\n${out.slice(-3000)}`);
    }
    if (out.includes("env.ENGINE_ENV ")) throw new Error("the production configuration sets ENGINE_ENV (development must never be declared there)");
    return { gzipKiB: Number(m[1]), settings: settings.length };
  } finally {
    rmSync(configPath, { force: true });
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * The helpers' own check: they find what they are for and refuse what they must (run before the
 * dry run, so a helper that accepts everything cannot pass the check above).
 * @throws naming the case that went wrong.
 */
export function checkHelpers() {
  const guide = `x\n${MARKER} -->\n\`\`\`toml\n[[t]]\nid = "new" # why\n\n[vars]\nA = "a \\" b"\n\`\`\`\n`;
  const settings = productionValues(guide);
  const expected = [{ header: "[[t]]", key: "id", value: '"new"' }, { header: "[vars]", key: "A", value: '"a \\" b"' }];
  if (JSON.stringify(settings) !== JSON.stringify(expected)) throw new Error(`productionValues read ${JSON.stringify(settings)}`);
  const applied = applyValues('[[t]]\nname = "x"\n[[t]]\nid = "old"\n[vars]\n# A = "no"\nA = "old"\n', settings);
  if (applied !== '[[t]]\nname = "x"\n[[t]]\nid = "new"\n[vars]\n# A = "no"\nA = "a \\" b"\n') throw new Error(`applyValues wrote ${applied}`);
  const refuses = (what, f) => {
    try {
      f();
    } catch {
      return;
    }
    throw new Error(`accepted ${what}`);
  };
  refuses("a key wrangler.toml does not set", () => applyValues('[vars]\nB = "b"\n', settings));
  refuses("a key set in two tables", () => applyValues('[[t]]\nid = "1"\n[[t]]\nid = "2"\n[vars]\nA = "a"\n', settings));
  refuses("a guide without the marker", () => productionValues("```toml\n[vars]\nA = \"a\"\n```\n"));
  refuses("a line that is not key = \"string\"", () => productionValues(`${MARKER} -->\n\`\`\`toml\n[vars]\nA = 1\n\`\`\`\n`));
  refuses("an unclosed block", () => productionValues(`${MARKER} -->\n\`\`\`toml\n[vars]\nA = "a"\n`));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  checkHelpers();
  const s = checkProductionConfig();
  console.log(`✓ the guide's production configuration (${s.settings} values) deploys as a dry run: gzip ${s.gzipKiB.toFixed(2)} KiB`);
}
