// `node bench/tz.mjs`: figures for the coordinates → IANA time zone lookup (src/domain/timezone/tz_lookup.rs),
// printed as a table (and as JSON with --json). Measurements only: nothing here is a pass/fail test,
// though each figure is printed next to the bound the time-zone work set for it.
//
//   1. size of the compiled-in data (raw and gzip -9) and, when build/ exists, of the Worker's wasm;
//   2. host lookup time: the #[ignore]d test `bench_lookup_time_and_accuracy` in tests/host/tz_lookup.rs,
//      built with the release profile (LTO off and 16 codegen units here, to keep the build short;
//      opt-level "z" as in the Worker), 500,000 lookups of fixed pseudo-random points;
//   3. accuracy on a held-out table: the cities of npm `city-timezones` (MIT; a different source
//      than the lookup's boundary data, used only here, never shipped) — the share whose looked-up
//      zone has the same UTC offsets on 2027-01-15 and 2027-07-15 as the city's zone, the share
//      with the exact zone name, and the worst misses.
//
// Knobs: TZ_BENCH_NODE_MODULES (where `city-timezones` is installed; default ./node_modules),
// CARGO_TARGET_DIR (as for cargo).
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { root, cargoBin, toolEnv } from "../scripts/lib.mjs";

const BOUNDS = { addedGzipBytes: 60 * 1024, nsPerLookup: 50_000, sameOffsets: 0.97, exactName: 0.9 };
const gz = (buf) => gzipSync(buf, { level: 9 }).length;
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
const pct = (x) => `${(100 * x).toFixed(2)} %`;
const mark = (ok) => (ok ? "✓" : "✗");

// 1. Sizes.
const dataDir = join(root, "src", "domain", "timezone", "tz_lookup");
const files = ["quadtree.dat", "zones.txt"].map((f) => readFileSync(join(dataDir, f)));
const data = Buffer.concat(files);
const sizes = { dataRaw: data.length, dataGzip: gz(data) };
const wasm = join(root, "build", "index_bg.wasm");
if (existsSync(wasm)) {
  const w = readFileSync(wasm);
  sizes.wasmRaw = w.length;
  sizes.wasmGzip = gz(w);
}

// 3. Held-out cities → CSV for the Rust side.
const nodeModules = process.env.TZ_BENCH_NODE_MODULES ?? join(root, "node_modules");
const require = createRequire(join(nodeModules, "noop.js"));
const cities = require("city-timezones/data/cityMap.json").filter(
  (c) => c.timezone && Number.isFinite(c.lat) && Number.isFinite(c.lng),
);
const tmp = mkdtempSync(join(tmpdir(), "tz-bench-"));
const csv = join(tmp, "cities.csv");
writeFileSync(
  csv,
  cities.map((c) => `${c.lat},${c.lng},${c.timezone},${c.city_ascii || c.city}, ${c.country}`.replace(/\n/g, " ")).join("\n"),
);

// 2 + 3. The Rust measurement.
const r = spawnSync(
  join(cargoBin, "cargo"),
  ["test", "--release", "--quiet", "--test", "host", "tz_lookup::bench_lookup_time_and_accuracy", "--", "--ignored", "--exact", "--nocapture"],
  {
    cwd: root,
    encoding: "utf8",
    env: toolEnv({
      TZ_BENCH_CITIES: csv,
      CARGO_PROFILE_RELEASE_LTO: "false",
      CARGO_PROFILE_RELEASE_CODEGEN_UNITS: "16",
    }),
    maxBuffer: 64 * 1024 * 1024,
  },
);
rmSync(tmp, { recursive: true, force: true });
if (r.status !== 0) {
  process.stderr.write(r.stdout + r.stderr);
  throw new Error(`cargo test exited with ${r.status}`);
}
const figures = Object.fromEntries(
  r.stdout
    .split("\n")
    .filter((l) => l.startsWith("TZBENCH "))
    .map((l) => JSON.parse(l.slice(8)))
    .map((f) => [f.kind, f]),
);
const { time, accuracy } = figures;

const result = { sizes, time, accuracy, heldOut: "city-timezones@" + require("city-timezones/package.json").version };
if (process.argv.includes("--json")) {
  console.log(JSON.stringify(result, null, 2));
} else {
  const same = accuracy.same_offsets / accuracy.cities;
  const exact = accuracy.exact_name / accuracy.cities;
  const lines = [
    "| figure | value | bound |",
    "|---|---|---|",
    `| compiled-in data (quadtree.dat + zones.txt) | ${sizes.dataRaw.toLocaleString("en")} B raw, ${sizes.dataGzip.toLocaleString("en")} B gzip | ≤ ${kb(BOUNDS.addedGzipBytes)} gzip added ${mark(sizes.dataGzip <= BOUNDS.addedGzipBytes)} |`,
    sizes.wasmRaw
      ? `| build/index_bg.wasm as built now | ${sizes.wasmRaw.toLocaleString("en")} B raw, ${sizes.wasmGzip.toLocaleString("en")} B gzip | |`
      : "| build/index_bg.wasm | not built (npm run build) | |",
    `| host lookup, steady state | ${time.ns_per_lookup} ns (${time.lookups.toLocaleString("en")} lookups) | ≤ 50 µs ${mark(time.ns_per_lookup <= BOUNDS.nsPerLookup)} |`,
    `| host lookup, first call of a process (splits the zone list, cold caches) | ${(time.first_call_ns / 1000).toFixed(1)} µs | |`,
    `| same UTC offset in January and July (${accuracy.cities.toLocaleString("en")} cities, ${result.heldOut}) | ${pct(same)} | ≥ 97 % ${mark(same >= BOUNDS.sameOffsets)} |`,
    `| exact zone name | ${pct(exact)} | ≥ 90 % ${mark(exact >= BOUNDS.exactName)} |`,
    `| misses by more than one hour | ${accuracy.misses_over_1h} | |`,
    `| reference zones unknown to the bundled tz database (skipped) | ${accuracy.unknown_reference_zone} | |`,
  ];
  console.log(lines.join("\n"));
  console.log("\nWorst misses:");
  for (const w of accuracy.worst) console.log(`- ${w}`);
}
