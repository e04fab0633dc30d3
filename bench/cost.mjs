// Cost per booking, measured: runs bench/cost.bench.mjs inside workerd (the real Worker with its
// bindings counted, bench/cost/entry.mjs) and returns one row per scenario — D1 calls, D1 rows read
// and written, subrequests, Workflow steps, workerd CPU ms — with the targets and a trend against
// the runs kept in bench/cost-history.json (the first entry is the engine before the counting
// harness existed, measured with the same harness), and D1's growth per 1,000 complete bookings.
// Runnable alone after a build: `node bench/cost.mjs` (`--record` appends this run to the history,
// `--tags` prints each scenario's counts by entry point and step).
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { runVitestBenchTags, root } from "./vitest-bench.mjs";

/** Targets per scenario (by the start of its name): D1 calls. */
export const TARGETS = { "booking.book": 10, "scheduled email": 4, "duplicate delivery": 1 };
const HISTORY = join(root, "bench", "cost-history.json");

/**
 * One run of the cost benchmark: `rows`, every scenario's counts
 * (`[{ scenario, d1_calls, rows_read, rows_written, subrequests, steps, cpu_ms, cpu_ms_runs,
 * d1_calls_rows_unreported, tags }]`), and `size`, D1's growth over complete bookings
 * (`{ bookings, emails_per_booking, db_bytes_per_1000, email_content_bytes_per_1000,
 * table_bytes_per_1000: { table: bytes }, … }`).
 */
export function measureCost() {
  const out = runVitestBenchTags("vitest.cost.config.mjs", ["BENCH_COST", "BENCH_COST_SIZE"]);
  return { rows: out.BENCH_COST, size: out.BENCH_COST_SIZE[0] };
}

export function history() {
  return existsSync(HISTORY) ? JSON.parse(readFileSync(HISTORY, "utf8")) : [];
}

/** Appends this run (rows without their per-tag detail, and the size) to bench/cost-history.json. */
export function record({ rows, size }) {
  const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).stdout.trim();
  const entry = { date: new Date().toISOString().slice(0, 10), commit, rows: rows.map(({ tags, cpu_ms_runs, ...r }) => r), size };
  writeFileSync(HISTORY, JSON.stringify([...history(), entry], null, 1) + "\n");
}

const key = (scenario) => scenario.split(" ")[0].replace(/[:(]/g, "");

/** The CPU column's header: what the figure includes, so it is not read as billed CPU. */
export const CPU_HEADER = "workerd process CPU ms (includes local D1's SQLite and the test harness; an upper bound of the Worker's billed CPU)";

/** Table rows: scenario, D1 calls (target), rows read, rows written, subrequests, steps, CPU ms, trend. */
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
      (target === undefined ? String(r.d1_calls) : `${r.d1_calls} (target ≤ ${target}${r.d1_calls <= target ? ", met" : ", not met"})`) +
        (r.d1_calls_rows_unreported ? ` (${r.d1_calls_rows_unreported} exec() without rows reported)` : ""),
      String(r.rows_read),
      String(r.rows_written),
      String(r.subrequests),
      String(r.steps),
      `${r.cpu_ms} (${r.cpu_ms_runs.join(", ")})`,
      trend ? `${trend} → ${r.d1_calls} now` : "first run",
    ];
  });
}

export const COST_HEADERS = ["scenario", "D1 calls", "D1 rows read", "D1 rows written", "subrequests", "Workflow steps", `${CPU_HEADER}: median (each run)`, "trend (D1 calls)"];

const MiB = (b) => `${(b / 1024 / 1024).toFixed(2)} MiB`;

/** One line: D1's growth per 1,000 complete hotel bookings, and how much of it is email content. */
export function sizeLine(size) {
  return (
    `D1 size per 1,000 bookings, emails as sent kept (RETENTION_EMAIL_CONTENT_DAYS, 180 days by default): ` +
    `${MiB(size.db_bytes_per_1000)} (${size.db_bytes_per_1000.toLocaleString("en-US")} bytes; D1's meta.size_after before and after), ` +
    `of which the emails' stored content ${MiB(size.email_content_bytes_per_1000)} ` +
    `(${size.emails_per_booking} emails per booking: confirmation, owner alert, arrival guide, check-in note, thank-you); ` +
    `measured over ${size.bookings} complete hotel journeys, scaled ×${(1000 / size.bookings).toFixed(0)}. ` +
    `Stored bytes by table (values only, without indexes and page overhead): ` +
    Object.entries(size.table_bytes_per_1000 ?? {})
      .map(([table, bytes]) => `${table} ${MiB(bytes)}`)
      .join(", ")
  );
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const run = measureCost();
  console.log(`| ${COST_HEADERS.join(" | ")} |`);
  console.log(`|${COST_HEADERS.map(() => "---").join("|")}|`);
  for (const r of costTable(run.rows)) console.log(`| ${r.join(" | ")} |`);
  console.log("");
  console.log(sizeLine(run.size));
  if (process.argv.includes("--tags")) for (const r of run.rows) console.log(r.scenario, JSON.stringify(r.tags));
  if (process.argv.includes("--record")) record(run);
}
