// Runs one of the in-workerd benchmarks (a vitest config under bench/) and returns its
// measurements: every `<TAG> {json}` line it printed, parsed. Exits the process with the run's
// tail when vitest fails or prints none. printRows prints them, as a table or JSON. Shared by
// bench/admin.mjs, bench/cost.mjs, bench/sweeper.mjs and bench/webhooks.mjs.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** @param {string} config file name under bench/ @param {string} tag e.g. `BENCH_SWEEPER` */
export function runVitestBench(config, tag) {
  return runVitestBenchTags(config, [tag])[tag];
}

/**
 * Runs the benchmark once and returns, per tag of `tags`, the lines it printed with that tag,
 * parsed (`{ [tag]: [json, …] }`). Every tag must have at least one line.
 */
export function runVitestBenchTags(config, tags) {
  const bin = join(root, "node_modules", ".bin");
  const run = spawnSync(join(bin, "vitest"), ["run", "--config", join(root, "bench", config)], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    maxBuffer: 64 * 1024 * 1024,
  });
  const lines = `${run.stdout}\n${run.stderr}`.split("\n");
  const out = {};
  for (const tag of tags) {
    const pattern = new RegExp(`${tag} (\\{.*\\})`);
    out[tag] = lines
      .map((line) => pattern.exec(line))
      .filter(Boolean)
      .map((m) => JSON.parse(m[1]));
  }
  const empty = tags.filter((t) => out[t].length === 0);
  if (run.status !== 0 || empty.length > 0) {
    process.stderr.write(run.stdout.slice(-4000) + run.stderr.slice(-4000));
    console.error(`bench/${config}: vitest exited ${run.status}${empty.length ? `, no ${empty.join(", ")} line` : ""}`);
    process.exit(1);
  }
  return out;
}

/**
 * Prints a benchmark's rows: as JSON with `--json`, else as a markdown table.
 * @param {object[]} rows the measurements
 * @param {string[]} header the column names
 * @param {(row: object) => unknown[]} cells one row's cells, in the header's order
 * @param {string} [separator] the markdown alignment line (default: first column left, the others right)
 */
export function printRows(rows, header, cells, separator = `|---|${"---:|".repeat(header.length - 1)}`) {
  if (process.argv.includes("--json")) {
    console.log(JSON.stringify(rows, null, 1));
    return;
  }
  console.log(`| ${header.join(" | ")} |`);
  console.log(separator);
  for (const r of rows) console.log(`| ${cells(r).join(" | ")} |`);
}
