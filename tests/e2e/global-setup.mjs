// Starts a real SMTP server with a REST API (maildev) for the failover tests, on free ports chosen
// now (provided to the test config as maildevSmtpPort / maildevWebPort), and stops it at the end.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { createServer as createHttpServer } from "node:http";
import { readFileSync } from "node:fs";
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

/**
 * A fake of the suppliers' read APIs the journeys call, serving the real-shaped fixtures:
 * - Duffel `GET /air/airline_initiated_changes?order_id=…` → the AIC list fixture for that order
 *   (order ids containing "nochange" get an empty list);
 * - liteAPI `GET /data/hotel?hotelId=…` → coordinates (Barcelona) for any id except ids containing
 *   "fail", which answer 500.
 * Requests without the expected credentials answer 401, as the real APIs do.
 */
function startSupplierApi() {
  const aic = JSON.parse(readFileSync(join(process.cwd(), "tests/fixtures/duffel-airline-initiated-change-object.json"), "utf8"));
  delete aic._modeled_on;
  const server = createHttpServer((req, res) => {
    const url = new URL(req.url, "http://fake");
    const send = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === "/air/airline_initiated_changes") {
      if (req.headers.authorization !== "Bearer test-duffel-token") return send(401, { errors: [{ code: "unauthorized" }] });
      const order = url.searchParams.get("order_id") ?? "";
      if (order.includes("nochange")) return send(200, { data: [] });
      const body = structuredClone(aic);
      for (const change of body.data) change.order_id = order;
      return send(200, body);
    }
    if (url.pathname === "/data/hotel") {
      if (req.headers["x-api-key"] !== "test-liteapi-key") return send(401, { error: "unauthorized" });
      const id = url.searchParams.get("hotelId") ?? "";
      if (id.includes("fail")) return send(500, { error: "internal" });
      return send(200, { data: { id, name: "Example Harbour Hotel", location: { latitude: 41.38, longitude: 2.18 } } });
    }
    send(404, { error: "not found" });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

export default async function setup(project) {
  const api = await startSupplierApi();
  project.provide("supplierApiPort", api.address().port);
  const smtpPort = await freePort();
  const webPort = await freePort();
  const bin = join(process.cwd(), "node_modules", ".bin", "maildev");
  const child = spawn(bin, ["--smtp", String(smtpPort), "--web", String(webPort), "--ip", "127.0.0.1", "--web-ip", "127.0.0.1", "--silent"], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  const exited = new Promise((_, reject) => child.on("exit", (code) => reject(new Error(`maildev exited with ${code}`))));
  await Promise.race([waitFor(`http://127.0.0.1:${webPort}/api/email`, 30_000), exited]);
  project.provide("maildevSmtpPort", smtpPort);
  project.provide("maildevWebPort", webPort);
  return async () => {
    child.kill("SIGTERM");
    api.close();
  };
}
