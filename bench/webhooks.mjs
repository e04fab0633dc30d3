// Outbound webhooks throughput: runs bench/webhooks.bench.mjs inside workerd and prints
// one row per scenario — N events to the local receiver, wall time, events per second, attempts.
// Runnable alone: `node bench/webhooks.mjs` (after a build; BENCH_WEBHOOK_EVENTS=1000 by default).
import { printRows, runVitestBench } from "./vitest-bench.mjs";

const rows = runVitestBench("vitest.webhooks.config.mjs", "BENCH_WEBHOOKS");
printRows(
  rows,
  ["scenario", "events", "wall ms", "events/s", "attempts", "mean attempt ms", "signatures verified"],
  (r) => [r.scenario, r.events, r.ms, r.per_s, r.attempts, r.avg_attempt_ms, r.verified],
);
