// `npm test` (after setup): Rust unit and integration tests on the host, then the Worker is built
// and the end-to-end tests run inside workerd (vitest + @cloudflare/vitest-plugin) with a real
// local SMTP server, and the owner's admin is driven in a real browser (tests/browser). Ends with one
// summary line: "tests: N passed, N failed".
import { spawnSync } from "node:child_process";
import { readFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { root, nodeBin, toolEnv, step, run } from "./lib.mjs";
import { measureUpload } from "./size-check.mjs";
import { checkHelpers, checkProductionConfig } from "./production-check.mjs";

// Set up whatever is missing first (one Node process, so Ctrl-C / SIGTERM reach this script's own
// handlers and its children are stopped with it).
await import("./setup.mjs");

let passed = 0;
let failed = 0;

await step("Rust tests on the host (cargo test)", () => {
  const r = spawnSync("cargo", ["test", "--color", "always"], { cwd: root, env: toolEnv(), encoding: "utf8" });
  process.stdout.write(r.stdout ?? "");
  process.stderr.write(r.stderr ?? "");
  for (const m of (r.stdout ?? "").matchAll(/test result: \w+\. (\d+) passed; (\d+) failed/g)) {
    passed += Number(m[1]);
    failed += Number(m[2]);
  }
  if (r.status !== 0) throw new Error(`cargo test exited with ${r.status}`);
});

await step("build the Worker", () => run("node", [join(root, "scripts", "build.mjs")]));

// The upload size budget (bytes, not time): counted as one test, so a Worker grown past it fails
// `npm test` while every other test still runs and reports.
const checkFailures = [];
await step("upload size within its budget (wrangler deploy --dry-run)", () => {
  const s = measureUpload();
  const line = `gzip ${s.gzipKiB.toFixed(2)} KiB of ${s.budgetKiB.toFixed(1)} KiB (upload ${s.totalKiB.toFixed(2)} KiB)`;
  if (s.within) {
    passed += 1;
    return line;
  }
  failed += 1;
  checkFailures.push(`the upload is over its size budget: ${line}`);
  process.stderr.write(`✗ over budget: ${line}\n`);
  return "over budget";
});

// The production configuration docs/operating.md tells the operator to deploy (wrangler.toml with
// the guide's production values applied), deployed as a dry run: counted as one test, like the
// size budget, so every other test still runs and reports when it fails.
await step("the deploy guide's production configuration (wrangler deploy --dry-run)", () => {
  try {
    checkHelpers();
    const s = checkProductionConfig();
    passed += 1;
    return `${s.settings} production values applied, gzip ${s.gzipKiB.toFixed(2)} KiB`;
  } catch (e) {
    failed += 1;
    checkFailures.push(`the deploy guide's production configuration: ${e.message.split("\n")[0]}`);
    process.stderr.write(`✗ ${e.message}\n`);
    return "failed";
  }
});

// Seven runs of the same Worker: Cloudflare Email Service as the main provider, then Resend (a
// local fake) as the main provider, then automatic refunds (COMPENSATION_REFUND_POLICY = automatic;
// the default, owner, runs in the first), then the SMTP failover against a server scripted per case
// (tests/e2e/scripted-smtp.mjs) and against a real Postfix relay (tests/e2e-postfix), then what
// waits for the owner (tests/e2e-loops: digest at hour 0, unanswered holds dismissed), then every
// D1 query's plan (tests/e2e-plans). All always run, so one failing run never hides another's
// results.
const runs = [
  ["end-to-end tests inside workerd, main provider Cloudflare Email Service (vitest)", "vitest.config.mjs", "vitest-report.json"],
  ["end-to-end tests inside workerd, main provider Resend (vitest)", "vitest.resend.config.mjs", "vitest-resend-report.json"],
  ["end-to-end tests inside workerd, automatic refunds (vitest)", "vitest.automatic.config.mjs", "vitest-automatic-report.json"],
  ["end-to-end tests inside workerd, SMTP failover against a scripted server (vitest)", "vitest.smtp.config.mjs", "vitest-smtp-report.json"],
  ["end-to-end tests inside workerd, SMTP failover against a real Postfix relay (vitest)", "vitest.postfix.config.mjs", "vitest-postfix-report.json"],
  ["end-to-end tests inside workerd, what waits for the owner: reminders, backlog, hotel time, digest (vitest)", "vitest.loops.config.mjs", "vitest-loops-report.json"],
  ["query plans inside workerd: no common path scans a growing D1 table (vitest)", "vitest.plans.config.mjs", "vitest-plans-report.json"],
];
const failures = [...checkFailures];
for (const [title, config, reportName] of runs) {
  // Not `step`: a failing run must not end the script, so the next run still runs and the summary
  // line below counts both.
  const started = Date.now();
  process.stdout.write(`→ ${title}\n`);
  mkdirSync(join(root, ".local"), { recursive: true });
  const report = join(root, ".local", reportName);
  rmSync(report, { force: true });
  const r = spawnSync(
    join(nodeBin, "vitest"),
    ["run", "--config", config, "--reporter=default", "--reporter=json", `--outputFile.json=${report}`],
    { cwd: root, env: toolEnv(), stdio: "inherit" },
  );
  try {
    const json = JSON.parse(readFileSync(report, "utf8"));
    passed += json.numPassedTests;
    failed += json.numFailedTests;
  } catch {}
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (r.status === 0) {
    process.stdout.write(`✓ ${title} (${secs} s)\n`);
  } else {
    failures.push(`vitest (${config}) exited with ${r.status ?? r.error?.message}`);
    process.stderr.write(`✗ ${title} failed (${secs} s)\n`);
  }
}

// Fourth: the owner's admin in a real browser (Chromium via playwright-core) against `wrangler dev`
// with a fresh local D1; a plain Node script that writes its counts to .local/browser-report.json.
{
  const title = "the owner's admin in a real browser (Chromium, wrangler dev)";
  const started = Date.now();
  process.stdout.write(`→ ${title}\n`);
  const report = join(root, ".local", "browser-report.json");
  rmSync(report, { force: true });
  const r = spawnSync(join(nodeBin, "node"), [join(root, "tests", "browser", "admin.browser.mjs")], { cwd: root, env: toolEnv(), stdio: "inherit" });
  try {
    const json = JSON.parse(readFileSync(report, "utf8"));
    passed += json.passed;
    failed += json.failed;
  } catch {
    // No report: the script did not get far enough to write one; count the run as one failure.
    failed += 1;
  }
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (r.status === 0) {
    process.stdout.write(`✓ ${title} (${secs} s)\n`);
  } else {
    failures.push(`tests/browser/admin.browser.mjs exited with ${r.status ?? r.error?.message}`);
    process.stderr.write(`✗ ${title} failed (${secs} s)\n`);
  }
}

console.log(`tests: ${passed} passed, ${failed} failed`);
if (failures.length) {
  for (const f of failures) process.stderr.write(`✗ ${f}\n`);
  process.exit(1);
}
