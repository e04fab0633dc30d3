// Small helpers shared by the npm scripts (setup, build, start, test, bench). Node built-ins only,
// so they run before `npm ci` has installed anything, on the machine's own Node.
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { join, dirname } from "node:path";
import { homedir } from "node:os";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const cargoBin = process.env.CARGO_HOME ? join(process.env.CARGO_HOME, "bin") : join(homedir(), ".cargo", "bin");
export const nodeBin = join(root, "node_modules", ".bin");

/** The environment for child processes: project tools (Node 22, wrangler) and cargo's bin first. */
export function toolEnv(extra = {}) {
  return { ...process.env, PATH: `${nodeBin}:${cargoBin}:${process.env.PATH}`, ...extra };
}

/** One progress line per step: `→ name …` then `✓ name (1.2 s)` or a clear failure and exit 1. */
export async function step(name, fn) {
  const started = Date.now();
  process.stdout.write(`→ ${name}\n`);
  try {
    const note = await fn();
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    process.stdout.write(`✓ ${name}${note ? ` — ${note}` : ""} (${secs} s)\n`);
    return note;
  } catch (e) {
    process.stderr.write(`✗ ${name} failed: ${e.message}\n`);
    process.exit(1);
  }
}

/** Runs a command, streaming its output; throws with the exit code on failure. */
export function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { cwd: root, env: toolEnv(), stdio: "inherit", ...options });
  if (r.error) throw new Error(`could not run ${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited with ${r.status}`);
}

/** Runs a command quietly and returns its stdout, or null if it cannot run or fails. */
export function output(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, env: toolEnv(), encoding: "utf8" });
  if (r.error || r.status !== 0) return null;
  return r.stdout.trim();
}

/** Starts a long-running child (output streamed with a prefix). */
export function background(name, cmd, args, extraEnv = {}) {
  const child = spawn(cmd, args, { cwd: root, env: toolEnv(extraEnv), stdio: ["ignore", "pipe", "pipe"] });
  const prefix = (chunk) =>
    chunk
      .toString()
      .split("\n")
      .filter((l) => l.length)
      .map((l) => `[${name}] ${l}\n`)
      .join("");
  child.stdout.on("data", (c) => process.stdout.write(prefix(c)));
  child.stderr.on("data", (c) => process.stderr.write(prefix(c)));
  return child;
}

/** Polls `url` until it answers 2xx, or throws after `ms`. */
export async function waitForHttp(url, ms) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within ${ms / 1000} s`);
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago (the kernel's choice for port 0), for a
 * server that must be told its port (maildev, Postfix, `wrangler dev`). Runs that overlap each
 * choose their own, so they never collide on a fixed number.
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
