// A local fake of the parts of Stripe's API the engine calls (started by tests/e2e/global-setup.mjs
// and tests/browser/admin.browser.mjs), answering as Stripe documents them and keeping its own
// record of payments, so a test can make "someone else's" payment and see the engine refuse it:
// - which Checkout Session created which PaymentIntent, with the session's client_reference_id
//   and metadata, and what each charge captured and refunded;
// - `Idempotency-Key` as Stripe's API v1 keeps it (https://docs.stripe.com/api/idempotent_requests:
//   the first result of a key is saved once the endpoint starts executing and replayed for every
//   retry with that key; the same key with other parameters is refused with 400
//   `idempotency_error`);
// - failures on command.
//
// Endpoints (all need `Authorization: Bearer <key>`, `sk_test_engine` unless started with another,
// else 401 like Stripe):
// - GET  /v1/payment_intents/{id}[?expand[]=latest_charge]
//   (https://docs.stripe.com/api/payment_intents/retrieve) → a PaymentIntent {id, object, amount,
//   amount_received, currency, status, latest_charge} whose expanded charge
//   (https://docs.stripe.com/api/charges/object) carries amount_captured and amount_refunded (the
//   live refunds made here); 404 `resource_missing` for an intent it never saw;
// - GET  /v1/checkout/sessions?payment_intent=… (https://docs.stripe.com/api/checkout/sessions/list)
//   → {object: "list", url, has_more: false, data: [the session that created it]};
// - POST /v1/refunds (form: payment_intent, amount?, reason, metadata[compensation_id];
//   https://docs.stripe.com/api/refunds/create) → a Refund {id: re_fake_N, object: "refund",
//   status, amount, currency, payment_intent, metadata}; an unknown intent is 404, an amount above
//   what remains 400 `invalid_request_error` with `param: "amount"` (no code, as Stripe answers),
//   nothing left 400 `charge_already_refunded`; no amount refunds what remains;
// - GET  /v1/refunds?payment_intent=… → {object: "list", data: [refunds of that intent]}.
// Test-only control endpoints (no auth):
// - POST /__payments {checkout.session object}: Stripe's record of a Checkout Session (what a
//   test's `checkout.session.completed` webhook describes): the session, and its PaymentIntent when
//   it has one (`succeeded` and captured `amount_total` when `payment_status` is `paid`);
// - POST /__fail  {payment_intent, plan: ["500", "500"]}: the next requests for that intent answer
//   in turn with each entry: "500" / "503" (server error, not saved for the key: the idempotency
//   layer never started executing), "429" (rate limit, not saved), "drop" (the connection closes
//   with no answer, after the refund IS made: the answer is lost), "expired_card" (402
//   card_error, saved), "charge_already_refunded" (400, saved), "pending" (the refund is made with
//   status pending), "list500" (the next GET /v1/refunds for it answers 500), "lookup500" (the
//   next GET of the intent or its sessions answers 500);
// - GET  /__requests?payment_intent=… → every refund request received for it
//   [{method, key, params, status}], in order;
// - GET  /__lookups?payment_intent=… → every look-up of it (intent or sessions) [{path, status}];
// - POST /__refund_status {id, status}: a refund's status moves on (as Stripe's does when the bank
//   answers), so a later list shows it.
import { createServer } from "node:http";

export function startFakeStripe({ key = "sk_test_engine" } = {}) {
  const requests = [];
  const lookups = [];
  const byKey = new Map(); // idempotency key → {params, status, body}
  const refunds = []; // every refund made
  const intents = new Map(); // payment intent id → PaymentIntent
  const sessions = []; // every Checkout Session on record
  const plans = new Map(); // payment_intent → remaining commanded answers
  let next = 1;

  const live = (r) => !["failed", "canceled"].includes(r.status);
  const refunded = (pi) => refunds.filter((r) => r.payment_intent === pi && live(r)).reduce((n, r) => n + r.amount, 0);
  const charge = (pi) => ({
    id: `ch_${pi.id}`,
    object: "charge",
    amount: pi.amount,
    amount_captured: pi.amount_received,
    amount_refunded: refunded(pi.id),
    refunded: pi.amount_received > 0 && refunded(pi.id) >= pi.amount_received,
    currency: pi.currency,
    payment_intent: pi.id,
  });

  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const url = new URL(req.url, "http://fake");
      const json = (status, body) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const error = (status, type, code, message, extra = {}) => json(status, { error: { type, code, message, ...extra } });
      if (url.pathname === "/__payments" && req.method === "POST") {
        const s = JSON.parse(raw);
        const session = { id: s.id ?? `cs_fake_${next++}`, object: "checkout.session", client_reference_id: s.client_reference_id ?? null, metadata: s.metadata ?? {}, payment_intent: s.payment_intent ?? null, payment_status: s.payment_status ?? "paid", status: "complete", amount_total: s.amount_total ?? 0, currency: s.currency ?? "eur" };
        sessions.push(session);
        if (session.payment_intent && !intents.has(session.payment_intent)) {
          const paid = session.payment_status === "paid";
          intents.set(session.payment_intent, {
            id: session.payment_intent,
            object: "payment_intent",
            amount: session.amount_total,
            amount_received: paid ? session.amount_total : 0,
            currency: session.currency,
            status: paid ? "succeeded" : "processing",
            metadata: {},
          });
        }
        return json(200, session);
      }
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
      if (url.pathname === "/__lookups") {
        const pi = url.searchParams.get("payment_intent");
        return json(200, lookups.filter((r) => !pi || r.payment_intent === pi));
      }
      if (req.headers.authorization !== `Bearer ${key}`) {
        return error(401, "invalid_request_error", "api_key_invalid", "Invalid API Key provided.");
      }
      // The look-ups: a PaymentIntent, and the sessions of one.
      const intentPath = /^\/v1\/payment_intents\/([^/]+)$/.exec(url.pathname);
      const sessionList = url.pathname === "/v1/checkout/sessions";
      if ((intentPath || sessionList) && req.method === "GET") {
        const pi = intentPath ? decodeURIComponent(intentPath[1]) : url.searchParams.get("payment_intent");
        const record = { path: url.pathname, payment_intent: pi, status: 0 };
        lookups.push(record);
        const plan = plans.get(pi) ?? [];
        if (plan[0] === "lookup500") {
          plan.shift();
          record.status = 500;
          return error(500, "api_error", null, "An unknown error occurred.");
        }
        if (sessionList) {
          record.status = 200;
          return json(200, { object: "list", url: "/v1/checkout/sessions", has_more: false, data: sessions.filter((s) => !pi || s.payment_intent === pi).slice(0, Number(url.searchParams.get("limit") ?? 10)) });
        }
        const intent = intents.get(pi);
        if (!intent) {
          record.status = 404;
          return error(404, "invalid_request_error", "resource_missing", `No such payment_intent: '${pi}'`, { param: "intent" });
        }
        record.status = 200;
        const expand = url.searchParams.getAll("expand[]").includes("latest_charge");
        return json(200, { ...intent, latest_charge: expand ? charge(intent) : `ch_${intent.id}` });
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
      const idemKey = req.headers["idempotency-key"] ?? null;
      const record = { method: "POST", key: idemKey, params, status: 0 };
      requests.push(record);
      const answer = (status, body) => {
        record.status = status;
        json(status, body);
      };
      if (idemKey && byKey.has(idemKey)) {
        const first = byKey.get(idemKey);
        if (first.raw !== raw) {
          record.status = 400;
          return error(400, "idempotency_error", "idempotency_key_in_use", "Keys for idempotent requests can only be used with the same parameters they were first used with.");
        }
        return answer(first.status, first.body);
      }
      const plan = plans.get(params.payment_intent) ?? [];
      const command = plan.shift();
      const save = (status, body) => {
        if (idemKey) byKey.set(idemKey, { raw, status, body });
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
      const intent = intents.get(params.payment_intent);
      if (!intent) return save(404, { error: { type: "invalid_request_error", code: "resource_missing", param: "payment_intent", message: `No such payment_intent: '${params.payment_intent}'` } });
      const remaining = intent.amount_received - refunded(intent.id);
      if (remaining <= 0) return save(400, { error: { type: "invalid_request_error", code: "charge_already_refunded", message: `Charge ch_${intent.id} has already been refunded.` } });
      const amount = params.amount ? Number(params.amount) : remaining;
      if (amount > remaining) return save(400, { error: { type: "invalid_request_error", param: "amount", message: `Refund amount (${amount}) is greater than unrefunded amount on charge (${remaining})` } });
      const refund = {
        id: `re_fake_${next++}`,
        object: "refund",
        amount,
        currency: intent.currency,
        payment_intent: params.payment_intent,
        reason: params.reason ?? null,
        status: command === "pending" ? "pending" : "succeeded",
        metadata: { compensation_id: params["metadata[compensation_id]"] },
      };
      refunds.push(refund);
      if (command === "drop") {
        if (idemKey) byKey.set(idemKey, { raw, status: 200, body: refund });
        record.status = -1;
        return req.socket.destroy();
      }
      save(200, refund);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}
