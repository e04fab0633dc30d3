// A local fake of Stripe's refunds API (https://docs.stripe.com/api/refunds), started by
// tests/e2e/global-setup.mjs. It records every request, honours `Idempotency-Key` the way Stripe's
// API v1 does (https://docs.stripe.com/api/idempotent_requests: the first result of a key is saved
// once the endpoint starts executing and replayed for every retry with that key; the same key
// with other parameters is refused with 400 `idempotency_error`), and fails on command.
//
// Endpoints (all need `Authorization: Bearer sk_test_engine`, else 401 like Stripe):
// - POST /v1/refunds (form: payment_intent, amount?, reason, metadata[compensation_id]) → a Refund
//   {id: re_fake_N, object: "refund", status, amount, currency: "eur", payment_intent, metadata};
// - GET  /v1/refunds?payment_intent=… → {object: "list", data: [refunds of that intent]}.
// Test-only control endpoints (no auth):
// - POST /__fail  {payment_intent, plan: ["500", "500"]}: the next requests for that intent answer
//   in turn with each entry: "500" / "503" (server error, not saved for the key: the idempotency
//   layer never started executing), "429" (rate limit, not saved), "drop" (the connection closes
//   with no answer, after the refund IS made: the answer is lost), "expired_card" (402
//   card_error, saved), "charge_already_refunded" (400, saved), "pending" (the refund is made with
//   status pending), "list500" (the next GET /v1/refunds for it answers 500);
// - GET  /__requests?payment_intent=… → every refund request received for it
//   [{method, key, params, status}], in order;
// - POST /__refund_status {id, status}: a refund's status moves on (as Stripe's does when the bank
//   answers), so a later list shows it.
import { createServer } from "node:http";

export function startFakeStripe() {
  const requests = [];
  const byKey = new Map(); // idempotency key → {params, status, body}
  const refunds = []; // every refund made
  const plans = new Map(); // payment_intent → remaining commanded answers
  let next = 1;

  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const url = new URL(req.url, "http://fake");
      const json = (status, body) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const error = (status, type, code, message) => json(status, { error: { type, code, message } });
      if (url.pathname === "/__fail" && req.method === "POST") {
        const { payment_intent, plan } = JSON.parse(raw);
        plans.set(payment_intent, [...(plans.get(payment_intent) ?? []), ...plan]);
        return json(200, { ok: true });
      }
      if (url.pathname === "/__refund_status" && req.method === "POST") {
        const { id, status } = JSON.parse(raw);
        const refund = refunds.find((r) => r.id === id);
        if (!refund) return json(404, { error: "no such refund" });
        refund.status = status;
        return json(200, refund);
      }
      if (url.pathname === "/__requests") {
        const pi = url.searchParams.get("payment_intent");
        return json(200, requests.filter((r) => !pi || r.params.payment_intent === pi));
      }
      if (req.headers.authorization !== "Bearer sk_test_engine") {
        return error(401, "invalid_request_error", "api_key_invalid", "Invalid API Key provided.");
      }
      if (url.pathname === "/v1/refunds" && req.method === "GET") {
        const pi = url.searchParams.get("payment_intent");
        const plan = plans.get(pi) ?? [];
        if (plan[0] === "list500") {
          plan.shift();
          requests.push({ method: "GET", key: null, params: { payment_intent: pi }, status: 500 });
          return error(500, "api_error", null, "An unknown error occurred.");
        }
        requests.push({ method: "GET", key: null, params: { payment_intent: pi }, status: 200 });
        return json(200, { object: "list", data: refunds.filter((r) => r.payment_intent === pi), has_more: false });
      }
      if (url.pathname !== "/v1/refunds" || req.method !== "POST") return error(404, "invalid_request_error", "resource_missing", "Unrecognized request URL.");
      const params = Object.fromEntries(new URLSearchParams(raw));
      const key = req.headers["idempotency-key"] ?? null;
      const record = { method: "POST", key, params, status: 0 };
      requests.push(record);
      const answer = (status, body) => {
        record.status = status;
        json(status, body);
      };
      if (key && byKey.has(key)) {
        const first = byKey.get(key);
        if (first.raw !== raw) {
          record.status = 400;
          return error(400, "idempotency_error", "idempotency_key_in_use", "Keys for idempotent requests can only be used with the same parameters they were first used with.");
        }
        return answer(first.status, first.body);
      }
      const plan = plans.get(params.payment_intent) ?? [];
      const command = plan.shift();
      const save = (status, body) => {
        if (key) byKey.set(key, { raw, status, body });
        answer(status, body);
      };
      if (command === "500" || command === "503") {
        record.status = Number(command);
        return error(Number(command), "api_error", null, "An unknown error occurred.");
      }
      if (command === "429") {
        record.status = 429;
        return error(429, "invalid_request_error", "rate_limit", "Too many requests hit the API too quickly.");
      }
      if (command === "expired_card") return save(402, { error: { type: "card_error", code: "expired_card", message: "The card has expired." } });
      if (command === "charge_already_refunded") return save(400, { error: { type: "invalid_request_error", code: "charge_already_refunded", message: "Charge has already been refunded." } });
      const live = (r) => !["failed", "canceled"].includes(r.status);
      if (refunds.some((r) => r.payment_intent === params.payment_intent && live(r) && !params.amount)) {
        return save(400, { error: { type: "invalid_request_error", code: "charge_already_refunded", message: "Charge has already been refunded." } });
      }
      const refund = {
        id: `re_fake_${next++}`,
        object: "refund",
        amount: params.amount ? Number(params.amount) : 54000,
        currency: "eur",
        payment_intent: params.payment_intent,
        reason: params.reason ?? null,
        status: command === "pending" ? "pending" : "succeeded",
        metadata: { compensation_id: params["metadata[compensation_id]"] },
      };
      refunds.push(refund);
      if (command === "drop") {
        if (key) byKey.set(key, { raw, status: 200, body: refund });
        record.status = -1;
        return req.socket.destroy();
      }
      save(200, refund);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}
