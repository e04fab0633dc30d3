// CPU time of the workerd processes running the cost benchmark, read from outside workerd: inside
// it, the clock does not advance while code runs, so a scenario cannot time its own CPU work.
// A vitest globalSetup (bench/vitest.cost.config.mjs): it runs in vitest's main process, finds the
// workerd processes among that process's descendants (Linux /proc) and serves their summed
// utime + stime on a free loopback port, which the benchmark fetches before and after each
// scenario (binding CPU_PROBE). What it reports is the whole workerd process: the Worker, local
// D1's SQLite, the Workflow and Durable Object runtimes and the test harness itself — an upper
// bound of the Worker's own billed CPU, in steps of one clock tick (10 ms with USER_HZ = 100).
import { createServer } from "node:http";
import { readFileSync, readdirSync } from "node:fs";

/** Kernel clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ; 100 on Linux). */
const USER_HZ = 100;

/** `{ pid, ppid, comm, ticks }` of every process readable in /proc. */
function processes() {
  const out = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      // After "pid (comm) ": state ppid … ; utime and stime are fields 14 and 15 of the whole line.
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.push({ pid: Number(pid), ppid: Number(f[1]), comm, ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // The process ended while being read.
    }
  }
  return out;
}

/**
 * CPU ms used so far by the workerd processes descending from `rootPid`, and their pids.
 * Throws when there is none (the probe would otherwise report a silent zero).
 */
export function workerdCpuMs(rootPid = process.pid) {
  const all = processes();
  const children = new Map();
  for (const p of all) {
    if (!children.has(p.ppid)) children.set(p.ppid, []);
    children.get(p.ppid).push(p);
  }
  const found = [];
  const stack = [...(children.get(rootPid) ?? [])];
  while (stack.length) {
    const p = stack.pop();
    if (p.comm === "workerd") found.push(p);
    stack.push(...(children.get(p.pid) ?? []));
  }
  if (found.length === 0) throw new Error(`no workerd process under pid ${rootPid}`);
  return { ms: (found.reduce((n, p) => n + p.ticks, 0) * 1000) / USER_HZ, pids: found.map((p) => p.pid) };
}

export default async function setup(project) {
  const server = createServer((req, res) => {
    try {
      const body = JSON.stringify(workerdCpuMs());
      res.writeHead(200, { "content-type": "application/json" }).end(body);
    } catch (e) {
      res.writeHead(500, { "content-type": "text/plain" }).end(String(e.message));
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("cpuProbePort", server.address().port);
  return () => new Promise((resolve) => server.close(resolve));
}
