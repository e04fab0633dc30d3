// Starts a real SMTP server with a REST API (maildev) for the failover tests, on ports of its own
// so a developer's `npm start` can run at the same time; stops it when the run ends.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { TEST_SMTP_PORT, TEST_MAILDEV_WEB_PORT } from "../../vitest.config.mjs";

async function waitFor(url, ms) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`maildev did not answer on ${url} within ${ms} ms`);
}

export default async function setup() {
  const bin = join(process.cwd(), "node_modules", ".bin", "maildev");
  const child = spawn(
    bin,
    ["--smtp", String(TEST_SMTP_PORT), "--web", String(TEST_MAILDEV_WEB_PORT), "--ip", "127.0.0.1", "--silent"],
    { stdio: ["ignore", "inherit", "inherit"] },
  );
  await waitFor(`http://127.0.0.1:${TEST_MAILDEV_WEB_PORT}/api/email`, 20_000);
  return async () => {
    child.kill("SIGTERM");
  };
}
