// Starts a real SMTP server with a REST API (maildev) for the failover tests, on free ports chosen
// now (provided to the test config as maildevSmtpPort / maildevWebPort), and stops it at the end.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";

function freePort() {
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

export default async function setup(project) {
  const smtpPort = await freePort();
  const webPort = await freePort();
  const bin = join(process.cwd(), "node_modules", ".bin", "maildev");
  const child = spawn(bin, ["--smtp", String(smtpPort), "--web", String(webPort), "--ip", "127.0.0.1", "--silent"], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  const exited = new Promise((_, reject) => child.on("exit", (code) => reject(new Error(`maildev exited with ${code}`))));
  await Promise.race([waitFor(`http://127.0.0.1:${webPort}/api/email`, 30_000), exited]);
  project.provide("maildevSmtpPort", smtpPort);
  project.provide("maildevWebPort", webPort);
  return async () => {
    child.kill("SIGTERM");
  };
}
