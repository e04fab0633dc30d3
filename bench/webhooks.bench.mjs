// Outbound webhooks throughput inside workerd (run by bench/webhooks.mjs through
// bench/vitest.webhooks.config.mjs; not an end-to-end test: nothing here is asserted about speed).
//
// Two scenarios, each with N events (BENCH_WEBHOOK_EVENTS, default 1,000) and one subscriber at the
// local receiver (which verifies every Standard Webhooks signature):
// - "deliver": N events and their deliveries recorded in D1 as `publish` records them, N queue
//   messages sent in batches of 100; measured until D1 says all N are delivered — the consumer
//   alone (load, lease, sign, POST, record);
// - "publish + deliver": N Cloudflare Email Service hard-bounce events put on the events queue;
//   measured until all N webhook deliveries are delivered — the events consumer (raw event,
//   suppression, publish = D1 read + D1 batch + queue send) and then the delivery consumer.
// One line per scenario: `BENCH_WEBHOOKS {json}`.
import { env, SELF, applyD1Migrations } from "cloudflare:test";
import { it, expect } from "vitest";

const N = Number(env.BENCH_WEBHOOK_EVENTS);
const AUTH = { authorization: "Bearer bench-operator-token", "content-type": "application/json" };

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

async function subscriber(types, name) {
  const r = await SELF.fetch("https://engine.test/admin/webhooks/subscribers", {
    method: "POST",
    headers: AUTH,
    body: JSON.stringify({ url: `${env.WEBHOOK_RECEIVER}/hook/${name}`, eventTypes: types }),
  });
  const s = await r.json();
  await fetch(`${env.WEBHOOK_RECEIVER}/__register`, { method: "POST", body: JSON.stringify({ name, secret: s.secret }) });
  return s.subscriberId;
}

async function delivered(subId) {
  const r = await env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE subscriber_id = ? AND status = 'delivered'").bind(subId).first();
  return r.n;
}

async function until(subId, started) {
  for (;;) {
    const n = await delivered(subId);
    if (n >= N) return Date.now() - started;
    if (Date.now() - started > 800_000) throw new Error(`only ${n} of ${N} delivered`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function attemptsOf(subId) {
  const r = await env.DB.prepare(
    "SELECT COUNT(*) AS n, AVG(a.duration_ms) AS avg_ms FROM webhook_attempts a JOIN webhook_deliveries d ON d.delivery_id = a.delivery_id WHERE d.subscriber_id = ?",
  ).bind(subId).first();
  return r;
}

it("deliver: N recorded deliveries through the consumer", async () => {
  const sub = await subscriber(["booking.updated"], "bench-deliver");
  const now = Date.now();
  const stmts = [];
  const ids = [];
  for (let i = 0; i < N; i++) {
    const eventId = `evt_${String(i).padStart(32, "0")}`;
    const body = JSON.stringify({ id: eventId, type: "booking.updated", version: 1, createdAt: new Date(now).toISOString(), data: { bookingId: `BK${i}`, change: "bench" } });
    const deliveryId = `${eventId}.${sub}`;
    ids.push(deliveryId);
    stmts.push(env.DB.prepare("INSERT INTO webhook_events (event_id, event_type, booking_id, body, created_at_ms) VALUES (?, 'booking.updated', ?, ?, ?)").bind(eventId, `BK${i}`, body, now));
    stmts.push(
      env.DB.prepare("INSERT INTO webhook_deliveries (delivery_id, event_id, subscriber_id, status, enqueued_at_ms, due_at_ms, created_at_ms, updated_at_ms) VALUES (?, ?, ?, 'pending', ?, ?, ?, ?)").bind(deliveryId, eventId, sub, now, now, now, now),
    );
  }
  for (let i = 0; i < stmts.length; i += 500) await env.DB.batch(stmts.slice(i, i + 500));
  const started = Date.now();
  for (let i = 0; i < ids.length; i += 100) {
    await env.WEBHOOKS.sendBatch(ids.slice(i, i + 100).map((deliveryId) => ({ body: { deliveryId, gen: 0 } })));
  }
  const ms = await until(sub, started);
  const a = await attemptsOf(sub);
  const got = await (await fetch(`${env.WEBHOOK_RECEIVER}/__deliveries?name=bench-deliver`)).json();
  expect(got.length).toBe(N);
  console.log(`BENCH_WEBHOOKS ${JSON.stringify({ scenario: "deliver", events: N, ms, per_s: Math.round((N * 1000) / ms), attempts: a.n, avg_attempt_ms: Math.round(a.avg_ms), verified: got.filter((x) => x.verified).length, unique_ids: new Set(got.map((x) => x.id)).size })}`);
});

it("publish + deliver: N Email Service bounce events through both consumers", async () => {
  const sub = await subscriber(["email.bounced"], "bench-publish");
  const started = Date.now();
  for (let i = 0; i < N; i += 100) {
    const batch = [];
    for (let j = i; j < Math.min(N, i + 100); j++) {
      batch.push({
        body: {
          type: "cf.email.sending.message.bounced",
          source: { type: "email.sending", domain: "example.com" },
          payload: { eventId: `bench-${j}`, recipient: `guest${j}@example.net`, delivery: { status: "bounced" }, bounce: { type: "hard", reason: "550 5.1.1 User unknown" } },
          metadata: { eventSchemaVersion: 1, eventTimestamp: new Date().toISOString() },
        },
      });
    }
    await env.EMAIL_EVENTS.sendBatch(batch);
  }
  const ms = await until(sub, started);
  const a = await attemptsOf(sub);
  const got = await (await fetch(`${env.WEBHOOK_RECEIVER}/__deliveries?name=bench-publish`)).json();
  expect(got.length).toBe(N);
  console.log(`BENCH_WEBHOOKS ${JSON.stringify({ scenario: "publish + deliver", events: N, ms, per_s: Math.round((N * 1000) / ms), attempts: a.n, avg_attempt_ms: Math.round(a.avg_ms), verified: got.filter((x) => x.verified).length, unique_ids: new Set(got.map((x) => x.id)).size })}`);
});
