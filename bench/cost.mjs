// Cost per booking, measured: runs bench/cost.bench.mjs inside workerd (the real Worker with its
// bindings counted, bench/cost/entry.mjs) and returns one row per scenario — D1 calls, D1 rows read
// and written, subrequests, Workflow steps — with the targets and a trend against the runs kept in
// bench/cost-history.json (the first entry is the engine before the counting harness existed,
// measured with the same harness). Runnable alone after a build: `node bench/cost.mjs`
// (`--record` appends this run to the history).
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { runVitestBench, root } from "./vitest-bench.mjs";

/** Targets per scenario (by the start of its name): D1 calls. */
export const TARGETS = { "booking.book": 10, "scheduled email": 4, "duplicate delivery": 1 };
const HISTORY = join(root, "bench", "cost-history.json");

/** Every scenario's counts: `[{ scenario, d1_calls, rows_read, rows_written, subrequests, steps, tags }]`. */
export function measureCost() {
  return runVitestBench("vitest.cost.config.mjs", "BENCH_COST");
}

export function history() {
  return existsSync(HISTORY) ? JSON.parse(readFileSync(HISTORY, "utf8")) : [];
}

export function record(rows) {
  const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).stdout.trim();
  const entry = { date: new Date().toISOString().slice(0, 10), commit, rows: rows.map(({ tags, ...r }) => r) };
  writeFileSync(HISTORY, JSON.stringify([...history(), entry], null, 1) + "\n");
}

const key = (scenario) => scenario.split(" ")[0].replace(/[:(]/g, "");

/** Table rows: scenario, D1 calls (target), rows read, rows written, subrequests, steps, trend. */
export function costTable(rows, past = history()) {
  const first = past[0];
  const last = past[past.length - 1];
  const before = (entry, r) => entry?.rows.find((x) => key(x.scenario) === key(r.scenario));
  return rows.map((r) => {
    const target = Object.entries(TARGETS).find(([k]) => r.scenario.startsWith(k))?.[1];
    const b = before(first, r);
    const l = before(last, r);
    const trend = [
      b ? `${b.d1_calls} calls at ${first.commit} (${first.date})` : null,
      l && last !== first ? `${l.d1_calls} at ${last.commit}` : null,
    ].filter(Boolean).join(" → ");
    return [
      r.scenario,
      target === undefined ? String(r.d1_calls) : `${r.d1_calls} (target ≤ ${target}${r.d1_calls <= target ? ", met" : ", not met"})`,
      String(r.rows_read),
      String(r.rows_written),
      String(r.subrequests),
      String(r.steps),
      trend ? `${trend} → ${r.d1_calls} now` : "first run",
    ];
  });
}

export const COST_HEADERS = ["scenario", "D1 calls", "D1 rows read", "D1 rows written", "subrequests", "Workflow steps", "trend (D1 calls)"];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = measureCost();
  console.log(`| ${COST_HEADERS.join(" | ")} |`);
  console.log(`|${COST_HEADERS.map(() => "---").join("|")}|`);
  for (const r of costTable(rows)) console.log(`| ${r.join(" | ")} |`);
  if (process.argv.includes("--tags")) for (const r of rows) console.log(r.scenario, JSON.stringify(r.tags));
  if (process.argv.includes("--record")) record(rows);
}
