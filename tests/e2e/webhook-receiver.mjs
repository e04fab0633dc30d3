// A local receiver of the engine's outbound webhooks, started by tests/e2e/global-setup.mjs. It
// verifies every delivery with the Standard Webhooks reference library (`standardwebhooks`, the
// same rules a subscriber's code uses: https://www.standardwebhooks.com), records it, and answers
// on command.
//
// Endpoints:
// - POST /hook/<name>: a delivery. Verified against the secret registered for <name>; answered
//   with the next commanded answer, else 200. Unregistered names answer 404.
// Test-only control endpoints:
// - POST /__register {name, secret}: the secret of <name> (the `whsec_` the engine returned);
// - POST /__plan {name, plan: ["500", "500", "410", "429:2" (Retry-After 2 s), "slow:<ms>",
//   "302", "400", "big" (200 with a 3 MB body)]}: the next deliveries to <name> are answered in turn with these (then 200);
//   `always500: true` instead answers 500 to everything until the next plan;
// - GET  /__deliveries?name=<name> → [{id, timestamp, verified, error?, type, body, status, at,
//   schemaErrors}] — `schemaErrors` is null when the body matches docs/webhook-events.schema.json
//   (checked with Ajv, JSON Schema 2020-12), else Ajv's error list.
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { Webhook } from "standardwebhooks";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const schema = JSON.parse(readFileSync(new URL("../../docs/webhook-events.schema.json", import.meta.url), "utf8"));
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(schema);

export function startWebhookReceiver() {
  const secrets = new Map();
  const plans = new Map();
  const always = new Map();
  const deliveries = new Map();

  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const url = new URL(req.url, "http://receiver");
      const json = (status, body, headers = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify(body));
      };
      if (req.method === "POST" && url.pathname === "/__register") {
        const { name, secret } = JSON.parse(raw);
        secrets.set(name, secret);
        return json(200, { ok: true });
      }
      if (req.method === "POST" && url.pathname === "/__plan") {
        const { name, plan = [], always500 = false } = JSON.parse(raw);
        plans.set(name, [...plan]);
        always.set(name, always500);
        return json(200, { ok: true });
      }
      if (req.method === "GET" && url.pathname === "/__deliveries") {
        return json(200, deliveries.get(url.searchParams.get("name")) ?? []);
      }
      const m = url.pathname.match(/^\/hook\/([\w-]+)$/);
      if (req.method !== "POST" || !m) return json(404, { error: "not found" });
      const name = m[1];
      const secret = secrets.get(name);
      if (!secret) return json(404, { error: `no subscriber ${name} registered` });
      const headers = {
        "webhook-id": req.headers["webhook-id"],
        "webhook-timestamp": req.headers["webhook-timestamp"],
        "webhook-signature": req.headers["webhook-signature"],
      };
      let verified = false;
      let error;
      let payload;
      try {
        payload = new Webhook(secret).verify(raw, headers);
        verified = true;
      } catch (e) {
        error = e.message;
      }
      const plan = plans.get(name) ?? [];
      let answer = always.get(name) ? "500" : plan.shift() ?? "200";
      const record = {
        id: headers["webhook-id"],
        timestamp: Number(headers["webhook-timestamp"]),
        verified,
        error,
        type: payload?.type,
        body: raw,
        schemaErrors: payload && !validate(payload) ? validate.errors : null,
        status: 0,
        at: Date.now(),
      };
      if (!deliveries.has(name)) deliveries.set(name, []);
      deliveries.get(name).push(record);
      if (!verified) answer = "401";
      if (answer.startsWith("slow:")) {
        const ms = Number(answer.slice(5));
        record.status = 200;
        setTimeout(() => json(200, { ok: true, late: true }), ms);
        return;
      }
      if (answer === "big") {
        record.status = 200;
        res.writeHead(200, { "content-type": "text/plain" });
        return res.end("x".repeat(3 * 1024 * 1024));
      }
      const [code, retryAfter] = answer.split(":");
      record.status = Number(code);
      if (code === "302") {
        res.writeHead(302, { location: "https://example.com/elsewhere" });
        return res.end();
      }
      json(Number(code), { answered: Number(code) }, retryAfter ? { "retry-after": retryAfter } : {});
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}
