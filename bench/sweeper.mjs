// The sweeper's cost per tick against the number of bookings (it must not grow with table size): runs
// bench/sweeper.bench.mjs inside workerd and prints one row per (bookings, due) pair — D1 rows
// read by the tick's own queries and its wall time. Runnable alone: `node bench/sweeper.mjs`
// (after a build; BENCH_SWEEPER_SIZES=0,10000,100000 BENCH_SWEEPER_DUE=0,10 by default).
import { printRows, runVitestBench } from "./vitest-bench.mjs";

const rows = runVitestBench("vitest.sweeper.config.mjs", "BENCH_SWEEPER");
printRows(
  rows,
  [
    "bookings, scheduled sends, emails, raw events (each)",
    "due (of each kind)",
    "D1 rows read",
    "wall ms",
    "journeys started",
    "sends decided",
    "emails handed over",
    "bodies pruned",
  ],
  (r) => [
    r.n.toLocaleString("en"),
    r.due,
    r.rows_read,
    r.ms,
    r.journeys_started,
    (r.scheduled_sent ?? 0) + (r.scheduled_skipped ?? 0),
    r.emails_enqueued ?? 0,
    r.raw_bodies_pruned,
  ],
  "|---:|---:|---:|---:|---:|---:|---:|---:|",
);
