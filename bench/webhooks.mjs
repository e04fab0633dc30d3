// Outbound webhooks throughput (issue #15): runs bench/webhooks.bench.mjs inside workerd and prints
// one row per scenario — N events to the local receiver, wall time, events per second, attempts.
// Runnable alone: `node bench/webhooks.mjs` (after a build; BENCH_WEBHOOK_EVENTS=1000 by default).
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(root, "node_modules", ".bin");
const run = spawnSync(join(bin, "vitest"), ["run", "--config", join(root, "bench", "vitest.webhooks.config.mjs")], {
  cwd: root,
  encoding: "utf8",
  env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  maxBuffer: 64 * 1024 * 1024,
});
const rows = `${run.stdout}\n${run.stderr}`
  .split("\n")
  .map((line) => /BENCH_WEBHOOKS (\{.*\})/.exec(line))
  .filter(Boolean)
  .map((m) => JSON.parse(m[1]));
if (run.status !== 0 || rows.length === 0) {
  process.stderr.write(run.stdout.slice(-4000) + run.stderr.slice(-4000));
  console.error(`bench/webhooks: vitest exited ${run.status} with ${rows.length} measurements`);
  process.exit(1);
}
if (process.argv.includes("--json")) {
  console.log(JSON.stringify(rows, null, 1));
} else {
  console.log("| scenario | events | wall ms | events/s | attempts | mean attempt ms | signatures verified |");
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(`| ${r.scenario} | ${r.events} | ${r.ms} | ${r.per_s} | ${r.attempts} | ${r.avg_attempt_ms} | ${r.verified} |`);
  }
}
