// Admin costs: runs bench/admin.bench.mjs inside workerd and prints one row per
// scenario: p50 / p90 / min wall ms of the sign-in (with and without the PBKDF2 hash) and of a
// booking's timeline page with 10 and 200 rows of each kind.
// Runnable alone: `node bench/admin.mjs` (after a build; BENCH_ADMIN_RUNS=20 by default).
import { printRows, runVitestBench } from "./vitest-bench.mjs";

const rows = runVitestBench("vitest.admin.config.mjs", "BENCH_ADMIN");
printRows(
  rows,
  ["scenario", "runs", "entries", "HTML KiB", "p50 ms", "p90 ms", "min ms"],
  (r) => [r.scenario, r.runs, r.entries ?? "", r.html_kb ?? "", r.p50_ms, r.p90_ms ?? "", r.min_ms ?? ""],
);
