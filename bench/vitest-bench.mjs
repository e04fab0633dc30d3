// Runs one of the in-workerd benchmarks (a vitest config under bench/) and returns its
// measurements: every `<TAG> {json}` line it printed, parsed. Exits the process with the run's
// tail when vitest fails or prints none. Shared by bench/sweeper.mjs and bench/webhooks.mjs.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** @param {string} config file name under bench/ @param {string} tag e.g. `BENCH_SWEEPER` */
export function runVitestBench(config, tag) {
  const bin = join(root, "node_modules", ".bin");
  const run = spawnSync(join(bin, "vitest"), ["run", "--config", join(root, "bench", config)], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    maxBuffer: 64 * 1024 * 1024,
  });
  const pattern = new RegExp(`${tag} (\\{.*\\})`);
  const rows = `${run.stdout}\n${run.stderr}`
    .split("\n")
    .map((line) => pattern.exec(line))
    .filter(Boolean)
    .map((m) => JSON.parse(m[1]));
  if (run.status !== 0 || rows.length === 0) {
    process.stderr.write(run.stdout.slice(-4000) + run.stderr.slice(-4000));
    console.error(`bench/${config}: vitest exited ${run.status} with ${rows.length} measurements`);
    process.exit(1);
  }
  return rows;
}
