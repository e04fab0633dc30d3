// `npm test` (after setup): Rust unit and integration tests on the host, then the Worker is built
// and the end-to-end tests run inside workerd (vitest + @cloudflare/vitest-plugin) with a real
// local SMTP server, and the owner's admin is driven in a real browser (tests/browser). Ends with one
// summary line: "tests: N passed, N failed".
//
// Where the time goes, and why the runs overlap: the host `cargo test` (debug profile, host target)
// and the Worker's build (release profile, wasm32) share no artifacts, and the release build ends
// in a single-threaded LTO link and wasm-opt, so both start at once. The end-to-end runs mostly
// wait (real SMTP conversations, webhook retries, a new workerd for every test file: a run uses
// a quarter to a half of one core), so they run side by side, TEST_JOBS jobs at a time (default 3:
// the two halves of tests/e2e start as soon as the Worker is built, while the host tests may still
// run), each with its own local servers on free ports. The tests/e2e run is split in two halves
// balanced by the last run's durations per file. Every run always runs and reports: one failing
// run never hides another's results.
import { spawn, spawnSync } from "node:child_process";
import { createWriteStream, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { loadavg } from "node:os";
import { join, relative } from "node:path";
import { root, nodeBin, toolEnv } from "./lib.mjs";

// Set up whatever is missing first (one Node process, so Ctrl-C / SIGTERM reach this script's own
// handlers and its children are stopped with it).
await import("./setup.mjs");

const startedAt = Date.now();
const cpuAtStart = childCpuSeconds();
const local = join(root, ".local");
const logs = join(local, "logs");
mkdirSync(logs, { recursive: true });

const jobsAtOnce = Math.max(1, Number(process.env.TEST_JOBS) || 3);
let passed = 0;
let failed = 0;
const failures = [];

/**
 * CPU seconds (user + system) of this process's children that have ended (Linux:
 * /proc/self/stat's cutime and cstime, in clock ticks); null where there is no /proc.
 */
function childCpuSeconds() {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[13]) + Number(fields[14])) / clockTicks();
  } catch {
    return null;
  }
}

let ticks;
function clockTicks() {
  ticks ??= Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout?.trim()) || 100;
  return ticks;
}

/** The 1, 5 and 15 minute load averages, as the summary prints them next to its times. */
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");

// ---------------------------------------------------------------------------------------------
// The jobs. Each writes its whole output to .local/logs/<id>.log, printed in one block when the
// job ends (two at a time would interleave their lines otherwise).

/** Test files of the tests/e2e run (vitest.config.mjs includes tests/e2e/**∕*.test.mjs). */
function e2eFiles() {
  const dir = join(root, "tests", "e2e");
  return readdirSync(dir, { recursive: true })
    .filter((f) => f.endsWith(".test.mjs"))
    .map((f) => relative(root, join(dir, f)))
    .sort();
}

/**
 * Splits `files` into `parts` lists of about equal duration (largest first, each to the lightest
 * list): a file's weight is its duration in the last run's reports (ms), else in
 * tests/e2e/durations.json (seconds per file of one whole run, for a fresh clone; a hint only, a
 * stale figure just balances less well), else its size in bytes scaled by the ms per byte of the
 * files that have a figure (a new file).
 */
function balance(files, parts, reports) {
  const ms = new Map();
  try {
    for (const [f, secs] of Object.entries(JSON.parse(readFileSync(join(root, "tests", "e2e", "durations.json"), "utf8")))) ms.set(f, secs * 1000);
  } catch {}
  for (const report of reports) {
    try {
      for (const t of JSON.parse(readFileSync(report, "utf8")).testResults) ms.set(relative(root, t.name), t.endTime - t.startTime);
    } catch {}
  }
  const size = (f) => statSync(join(root, f)).size;
  const known = files.filter((f) => ms.has(f));
  const perByte = known.length ? known.reduce((a, f) => a + ms.get(f), 0) / known.reduce((a, f) => a + size(f), 0) : 1;
  const weight = (f) => ms.get(f) ?? size(f) * perByte;
  const lists = Array.from({ length: parts }, () => ({ files: [], total: 0 }));
  for (const f of [...files].sort((a, b) => weight(b) - weight(a))) {
    const lightest = lists.reduce((a, b) => (b.total < a.total ? b : a));
    lightest.files.push(f);
    lightest.total += weight(f);
  }
  return lists.map((l) => l.files.sort());
}

const vitestReport = (id) => join(local, `vitest-${id}-report.json`);

/** A vitest run inside workerd: `files` limits the run's own include to those files. */
function vitestJob(id, title, config, files = []) {
  const report = vitestReport(id);
  return {
    id,
    title,
    after: ["build"],
    cmd: join(nodeBin, "vitest"),
    args: ["run", "--config", config, "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...files],
    before: () => rmSync(report, { force: true }),
    count() {
      // No report: vitest did not get far enough to write one (its exit status says it failed).
      try {
        const json = JSON.parse(readFileSync(report, "utf8"));
        passed += json.numPassedTests;
        failed += json.numFailedTests;
      } catch {}
    },
  };
}

/** A check after the build that counts as one test, passed when `script` (under scripts/) exits 0. */
function oneTestJob(id, title, script) {
  return {
    id,
    title,
    after: ["build"],
    cmd: process.execPath,
    args: [join(root, "scripts", script)],
    count(_log, ok) {
      if (ok) passed += 1;
      else failed += 1;
    },
  };
}

const halves = balance(e2eFiles(), 2, [1, 2].map((n) => vitestReport(`e2e-${n}`)));

const jobs = [
  {
    id: "cargo-test",
    title: "Rust tests on the host (cargo test)",
    cmd: "cargo",
    args: ["test", "--color", process.stdout.isTTY ? "always" : "never"],
    count(log) {
      for (const m of log.matchAll(/test result: \w+\. (\d+) passed; (\d+) failed/g)) {
        passed += Number(m[1]);
        failed += Number(m[2]);
      }
    },
  },
  { id: "build", title: "build the Worker", cmd: process.execPath, args: [join(root, "scripts", "build.mjs")] },
  // The upload size budget (bytes, not time): counted as one test, so a Worker grown past it
  // fails `npm test` while every other test still runs and reports.
  oneTestJob("size", "upload size within its budget (wrangler deploy --dry-run)", "size-check.mjs"),
  // The production configuration docs/operating.md tells the operator to deploy (wrangler.toml
  // with the guide's production values applied), deployed as a dry run: counted as one test,
  // like the size budget.
  oneTestJob("production-config", "the deploy guide's production configuration (wrangler deploy --dry-run)", "production-check.mjs"),
  // Cloudflare Email Service as the main provider (in two halves), then Resend (a local fake) as
  // the main provider, automatic refunds (COMPENSATION_REFUND_POLICY = automatic; the default,
  // owner, runs in the first), the SMTP failover against a server scripted per case
  // (tests/e2e/scripted-smtp.mjs) and against a real Postfix relay (tests/e2e-postfix), STARTTLS to an untrusted certificate
  // (tests/e2e-tls), what waits
  // for the owner (tests/e2e-loops: digest at hour 0, unanswered holds dismissed), every D1 query's
  // plan (tests/e2e-plans).
  ...halves.map((files, i) =>
    vitestJob(`e2e-${i + 1}`, `end-to-end tests inside workerd, main provider Cloudflare Email Service, half ${i + 1} of 2: ${files.length} files (vitest)`, "vitest.config.mjs", files),
  ),
  vitestJob("resend", "end-to-end tests inside workerd, main provider Resend (vitest)", "vitest.resend.config.mjs"),
  vitestJob("automatic", "end-to-end tests inside workerd, automatic refunds (vitest)", "vitest.automatic.config.mjs"),
  vitestJob("smtp", "end-to-end tests inside workerd, SMTP failover against a scripted server (vitest)", "vitest.smtp.config.mjs"),
  vitestJob("postfix", "end-to-end tests inside workerd, SMTP failover against a real Postfix relay (vitest)", "vitest.postfix.config.mjs"),
  vitestJob("tls", "end-to-end tests inside workerd, SMTP over STARTTLS to a server whose certificate is not trusted (vitest)", "vitest.tls.config.mjs"),
  vitestJob("loops", "end-to-end tests inside workerd, what waits for the owner: reminders, backlog, hotel time, digest (vitest)", "vitest.loops.config.mjs"),
  vitestJob("plans", "query plans inside workerd: no common path scans a growing D1 table (vitest)", "vitest.plans.config.mjs"),
  {
    // The owner's admin in a real browser (Chromium via playwright-core) against `wrangler dev`
    // with a fresh local D1; a plain Node script that writes its counts to .local/browser-report.json.
    id: "browser",
    title: "the owner's admin in a real browser (Chromium, wrangler dev)",
    after: ["build"],
    cmd: process.execPath,
    args: [join(root, "tests", "browser", "admin.browser.mjs")],
    before: () => rmSync(join(local, "browser-report.json"), { force: true }),
    count() {
      try {
        const json = JSON.parse(readFileSync(join(local, "browser-report.json"), "utf8"));
        passed += json.passed;
        failed += json.failed;
      } catch {
        // No report: the script did not get far enough to write one; count the run as one failure.
        failed += 1;
      }
    },
  },
];

// Which job goes first when a lane frees: the longest expected (the halves of tests/e2e, then the
// browser, the loops and automatic runs), so no long job starts last and runs alone.
const ORDER = ["cargo-test", "build", "size", "production-config", "e2e-1", "e2e-2", "browser", "loops", "automatic", "postfix", "smtp", "plans", "resend", "tls"];
jobs.sort((a, b) => ORDER.indexOf(a.id) - ORDER.indexOf(b.id));

const children = new Set();
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(130);
  });
}

/** Runs one job to its end; resolves `{ok, note}`. Never rejects. */
function runJob(job) {
  job.before?.();
  const logPath = join(logs, `${job.id}.log`);
  return new Promise((resolve) => {
    const out = createWriteStream(logPath);
    const env = toolEnv(process.stdout.isTTY ? { FORCE_COLOR: "1" } : {});
    const child = spawn(job.cmd, job.args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    children.add(child);
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    let ended = false;
    let lingering;
    const done = (status, error) => {
      if (ended) return;
      ended = true;
      clearTimeout(lingering);
      children.delete(child);
      out.end(() => {
        const log = readFileSync(logPath, "utf8");
        process.stdout.write(log);
        job.count?.(log, status === 0);
        resolve(status === 0 ? { ok: true } : { ok: false, note: `${relative(root, logPath)}: exited with ${status ?? error}` });
      });
    };
    child.on("error", (e) => done(null, e.message));
    child.on("close", (status, signal) => done(status ?? signal));
    // A process the job left behind that still holds its output open (a server a global setup
    // started with inherited stdio) must not keep the job from ending: 10 s after the job's own
    // process exited, what it wrote is taken as complete.
    child.on("exit", (status, signal) => {
      lingering = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        done(status ?? signal);
      }, 10_000);
    });
  });
}

/** Runs every job, `jobsAtOnce` at a time, each when the jobs it comes after have succeeded. */
async function runAll() {
  const state = new Map(jobs.map((j) => [j.id, "waiting"]));
  const running = new Set();
  return new Promise((resolveAll) => {
    const next = () => {
      // A job whose prerequisite failed does not run: it is a failure of its own, named.
      for (const job of jobs) {
        if (state.get(job.id) !== "waiting") continue;
        const broken = (job.after ?? []).find((id) => state.get(id) === "failed" || state.get(id) === "skipped");
        if (broken) {
          state.set(job.id, "skipped");
          failed += 1;
          failures.push(`${job.title}: not run, because "${jobs.find((j) => j.id === broken).title}" failed`);
        }
      }
      for (const job of jobs) {
        if (running.size >= jobsAtOnce) break;
        if (state.get(job.id) !== "waiting") continue;
        if (!(job.after ?? []).every((id) => state.get(id) === "done")) continue;
        state.set(job.id, "running");
        running.add(job.id);
        const started = Date.now();
        process.stdout.write(`→ ${job.title}\n`);
        runJob(job).then(({ ok, note }) => {
          running.delete(job.id);
          state.set(job.id, ok ? "done" : "failed");
          const secs = ((Date.now() - started) / 1000).toFixed(1);
          if (ok) {
            process.stdout.write(`✓ ${job.title}${note ? ` — ${note}` : ""} (${secs} s)\n`);
          } else {
            failures.push(`${job.title}: ${note}`);
            process.stderr.write(`✗ ${job.title} failed (${secs} s)${note ? `: ${note}` : ""}\n`);
          }
          next();
        });
      }
      if (running.size === 0 && [...state.values()].every((s) => s !== "waiting" && s !== "running")) resolveAll();
    };
    next();
  });
}

await runAll();

const wall = ((Date.now() - startedAt) / 1000).toFixed(1);
const cpu = childCpuSeconds();
const cpuNote = cpu === null || cpuAtStart === null ? "" : `, CPU ${(cpu - cpuAtStart).toFixed(1)} s`;
console.log(`time: ${wall} s after set-up${cpuNote}, ${jobsAtOnce} jobs at a time (load average ${load()}); logs in ${relative(root, logs)}/`);
console.log(`tests: ${passed} passed, ${failed} failed`);
for (const f of failures) process.stderr.write(`✗ ${f}\n`);
// Not process.exit: into a pipe, the jobs' logs may still be queued behind a full pipe, and exit
// would drop them with the summary line (seen in a CI-style `npm test | tee`).
if (failures.length) process.exitCode = 1;
