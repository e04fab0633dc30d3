// Outbound webhooks on Cloudflare Queues, inside workerd: real producer and consumer
// queues, the dead letter queue and the Email Service events queue, delivering to a local
// receiver (tests/e2e/webhook-receiver.mjs) that verifies every signature with the Standard
// Webhooks reference library and fails on command. Retry delays are seconds here (production:
// 60 s × 3ⁿ); the ceiling is 4 attempts (production 8).
import { env, SELF } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import {
  OPERATOR, dateInDays, deliveriesOf, deliveriesSettled, emailBounced, eventually, futureBooking, instanceIdFor,
  liteapiEvent, postLiteapi, receiverPlan, rows, runLiteapi, sendThrough, subscribe, sweep, unique,
} from "./helpers.mjs";
import { introspectWorkflowInstance } from "cloudflare:test";

async function api(method, path, body) {
  const r = await SELF.fetch(`https://engine.test${path}`, {
    method,
    headers: OPERATOR,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

async function received(name) {
  return (await fetch(`${env.WEBHOOK_RECEIVER}/__deliveries?name=${name}`)).json();
}

async function disable(sub) {
  await api("POST", `/admin/webhooks/subscribers/${sub.id}/disable`, { reason: "test over" });
}

/**
 * Records in D1 an `email.bounced` event (`eventId`, stored `body`) and its delivery to `sub`
 * (id `<eventId>.<sub.id>`), pending and due since `atMs` with no queue message: what a crash
 * between the D1 record and the queue send leaves for the sweeper. `attempts`, `lastStatusCode`
 * and `claimGen` are what earlier attempts left (by default none: the columns' defaults).
 */
async function recordLostDelivery(eventId, body, sub, atMs, { attempts = 0, lastStatusCode = null, claimGen = 0 } = {}) {
  await env.DB.batch([
    env.DB.prepare("INSERT INTO webhook_events (event_id, event_type, body, created_at_ms) VALUES (?, 'email.bounced', ?, ?)").bind(eventId, body, atMs),
    env.DB.prepare(
      "INSERT INTO webhook_deliveries (delivery_id, event_id, subscriber_id, status, attempts, last_status_code, claim_gen, enqueued_at_ms, due_at_ms, created_at_ms, updated_at_ms) VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?)",
    ).bind(`${eventId}.${sub.id}`, eventId, sub.id, attempts, lastStatusCode, claimGen, atMs, atMs, atMs, atMs),
  ]);
}

async function attemptsOf(deliveryId) {
  return rows(
    "SELECT attempt, status_code, outcome, duration_ms, error, response_excerpt FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt",
    deliveryId,
  );
}

describe("outbound webhooks", () => {
  it("a booking walks its journey: each event reaches its subscriber once, signed; a filtering subscriber gets only its own", async () => {
    const all = await subscribe([]);
    const cancels = await subscribe(["booking.cancelled"]);
    const d = futureBooking({ checkinInDays: 30, nights: 3 });
    await runLiteapi(d);
    const cancel = liteapiEvent("booking.cancel", { bookingId: d.bookingId, status: "CANCELLED" });
    await runLiteapi(cancel);

    const got = await eventually(async () => {
      const list = await received(all.name);
      const types = list.map((x) => x.type);
      expect(types).toContain("booking.confirmed");
      expect(types).toContain("booking.cancelled");
      return list;
    });
    expect(got.every((x) => x.verified)).toBe(true);
    // Every body matches its documented schema (docs/webhook-events.schema.json).
    expect(got.map((x) => x.schemaErrors)).toEqual(got.map(() => null));
    const confirmed = got.filter((x) => x.type === "booking.confirmed");
    expect(confirmed).toHaveLength(1);
    const body = JSON.parse(confirmed[0].body);
    expect(body).toMatchObject({
      id: confirmed[0].id,
      type: "booking.confirmed",
      version: 1,
      data: { bookingId: d.bookingId, kind: "hotel", source: "liteapi", checkin: d.checkin },
    });
    expect(confirmed[0].id).toMatch(/^evt_[0-9a-f]{32}$/);

    const onlyCancel = await eventually(async () => {
      const list = await received(cancels.name);
      expect(list).toHaveLength(1);
      return list;
    });
    expect(onlyCancel[0]).toMatchObject({ type: "booking.cancelled", verified: true });
    expect(JSON.parse(onlyCancel[0].body).data.bookingId).toBe(d.bookingId);

    // The same booking delivered again (another supplier event id: a new journey instance that
    // runs the same publishing step) publishes nothing new: the event id is the booking's.
    const again = futureBooking({ bookingId: d.bookingId, checkinInDays: 30, nights: 3 });
    const out = await runLiteapi(again);
    expect(out.failed).toEqual([]);
    await new Promise((r) => setTimeout(r, 2500));
    const after = await received(all.name);
    expect(after.filter((x) => x.type === "booking.confirmed")).toHaveLength(1);
    const ids = after.map((x) => x.id);
    expect(new Set(ids).size).toBe(ids.length);
    const recorded = await deliveriesOf(all.id);
    expect(recorded.every((r) => r.status === "delivered" && r.attempts === 1)).toBe(true);
    await disable(all);
    await disable(cancels);
  }, 60_000);

  it("a journey whose publishing step fails past its retries goes on: the guest's email still goes, the failure is listed, the owner is told once", async () => {
    const sub = await subscribe(["booking.confirmed"]);
    const d = futureBooking({ checkinInDays: 30, nights: 3 });
    // The event id is derived from the type and the booking id (src/domain/webhooks.rs).
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`booking.confirmed\n${d.bookingId}`));
    const eventId = `evt_${[...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("").slice(0, 32)}`;
    const out = await runLiteapi(d, async (m) => {
      await m.mockStepError({ name: `webhooks ${eventId}` }, new Error("queue unavailable (injected)"));
    });
    expect(out.failed).toEqual([[`webhooks ${eventId}`, expect.stringContaining("queue unavailable (injected)")]]);
    expect(out.emails.map(([k]) => k)).toContain(`booking_confirmation:${d.bookingId}`);
    // (D1 refuses LIKE patterns over 50 bytes: instr instead.)
    const alerts = await rows("SELECT dedupe_key, subject FROM emails WHERE kind = 'owner_webhook_alert' AND instr(dedupe_key, ?) > 0", `${eventId}-unpublished-`);
    expect(alerts).toEqual([{ dedupe_key: expect.stringContaining(eventId), subject: "Webhook event booking.confirmed could not be published" }]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await received(sub.name)).toEqual([]);
    await disable(sub);
  }, 60_000);

  it("500 twice then 200: delivered on the third attempt, each attempt recorded, the same webhook-id each time", async () => {
    // The 200 comes with a 3 MB body: only its first bytes are read and kept.
    const sub = await subscribe(["email.bounced"], { plan: ["500", "500", "big"] });
    await emailBounced(`${unique("guest")}@example.net`);
    const got = await eventually(async () => {
      const list = await received(sub.name);
      expect(list).toHaveLength(3);
      return list;
    }, { ms: 20_000 });
    expect(got.map((x) => x.status)).toEqual([500, 500, 200]);
    expect(new Set(got.map((x) => x.id)).size).toBe(1);
    expect(got.every((x) => x.verified)).toBe(true);
    // Re-signed with a fresh timestamp per attempt (never earlier than the one before).
    expect(got[2].timestamp).toBeGreaterThanOrEqual(got[0].timestamp);
    const [delivery] = await eventually(async () => {
      const ds = await deliveriesOf(sub.id);
      expect(ds[0].status).toBe("delivered");
      return ds;
    });
    expect(delivery.attempts).toBe(3);
    const attempts = await attemptsOf(delivery.delivery_id);
    expect(attempts.map((a) => [a.attempt, a.status_code, a.outcome])).toEqual([
      [1, 500, "retry"],
      [2, 500, "retry"],
      [3, 200, "delivered"],
    ]);
    expect(attempts[0].response_excerpt).toContain("500");
    expect(attempts[2].response_excerpt).toBe("x".repeat(512));
    await disable(sub);
  }, 60_000);

  it("always 500: dead after the ceiling, the owner alerted once; a redrive delivers once with the same id; a second redrive is refused", async () => {
    const sub = await subscribe(["email.bounced"]);
    await receiverPlan(sub.name, [], true);
    await emailBounced(`${unique("guest")}@example.net`);
    await emailBounced(`${unique("guest")}@example.net`);
    const dead = await deliveriesSettled(sub.id, 2, "dead");
    expect(dead.map((x) => x.attempts)).toEqual([4, 4]);
    const attempts = await attemptsOf(dead[0].delivery_id);
    expect(attempts.map((a) => a.outcome)).toEqual(["retry", "retry", "retry", "dead"]);
    expect(attempts[3].error).toContain("HTTP 500 on attempt 4 of 4");

    // Two dead letters, one alert (per subscriber and UTC day).
    const alerts = await eventually(async () => {
      const a = await rows("SELECT dedupe_key, to_addr FROM emails WHERE kind = 'owner_webhook_alert' AND dedupe_key LIKE ?", `%${sub.id}-dead-%`);
      expect(a).toHaveLength(1);
      return a;
    });
    expect(alerts[0].to_addr).toBe("owner@example.com");

    await receiverPlan(sub.name, [], false);
    const first = dead[0];
    const redriven = await api("POST", "/admin/webhooks/redrive", { deliveryId: first.delivery_id });
    expect(redriven).toEqual({ status: 200, body: { redriven: [first.delivery_id], count: 1, more: false } });
    await eventually(async () => {
      const ds = await deliveriesOf(sub.id);
      expect(ds.find((x) => x.delivery_id === first.delivery_id)).toMatchObject({
        status: "delivered",
        attempts: 5,
        budget_from: 4,
        redrives: 1,
      });
    }, { ms: 15_000 });
    const list = await received(sub.name);
    const okOnes = list.filter((x) => x.status === 200);
    expect(okOnes).toHaveLength(1);
    expect(okOnes[0].id).toBe(first.event_id);
    expect(okOnes[0].verified).toBe(true);

    const again = await api("POST", "/admin/webhooks/redrive", { deliveryId: first.delivery_id });
    expect(again.status).toBe(409);
    expect(again.body.message).toContain("a delivered event is never redriven");

    // By subscriber: the other dead one comes back; the delivered one is not touched.
    const bySub = await api("POST", "/admin/webhooks/redrive", { subscriberId: sub.id });
    expect(bySub.body).toEqual({ redriven: [dead[1].delivery_id], count: 1, more: false });
    await eventually(async () => {
      const ds = await deliveriesOf(sub.id);
      expect(ds.every((x) => x.status === "delivered")).toBe(true);
    }, { ms: 15_000 });
    expect((await received(sub.name)).filter((x) => x.status === 200)).toHaveLength(2);

    // Paging: newest first, `before` = the last row's createdAtMs.
    const page1 = await api("GET", `/admin/webhooks/deliveries?subscriber=${sub.id}&limit=1`);
    expect(page1.body.deliveries).toHaveLength(1);
    const page2 = await api("GET", `/admin/webhooks/deliveries?subscriber=${sub.id}&limit=1&before=${page1.body.deliveries[0].createdAtMs}`);
    expect(page2.body.deliveries.map((d) => d.deliveryId)).not.toContain(page1.body.deliveries[0].deliveryId);
    const one = await api("GET", `/admin/webhooks/deliveries?delivery=${first.delivery_id}`);
    expect(one.body.attempts.map((a) => a.outcome)).toEqual(["retry", "retry", "retry", "dead", "delivered"]);
    expect((await api("GET", `/admin/webhooks/deliveries?before=yesterday`)).status).toBe(400);
    expect((await api("GET", `/admin/webhooks/deliveries?status=lost`)).status).toBe(400);
    expect((await api("GET", `/admin/webhooks/deliveries?limit=0`)).status).toBe(400);
    const unknown = await api("POST", "/admin/webhooks/redrive", { deliveryId: "evt_nope.sub_nope" });
    expect(unknown.status).toBe(404);
    const bad = await api("POST", "/admin/webhooks/redrive", { deliveryId: "x", subscriberId: "y" });
    expect(bad.status).toBe(400);
    await disable(sub);
  }, 90_000);

  it("410 Gone: the subscriber is disabled, the owner alerted, nothing more is sent to it", async () => {
    const sub = await subscribe(["email.bounced"], { plan: ["410"] });
    await emailBounced(`${unique("guest")}@example.net`);
    await eventually(async () => {
      const s = await api("GET", "/admin/webhooks/subscribers");
      const me = s.body.subscribers.find((x) => x.subscriberId === sub.id);
      // The same shape as the creation's answer: a boolean and a list.
      expect(me.enabled).toBe(false);
      expect(me.eventTypes).toEqual(["email.bounced"]);
      expect(me.disabledReason).toContain("410 Gone");
    }, { ms: 15_000 });
    await eventually(async () => {
      const a = await rows("SELECT dedupe_key FROM emails WHERE kind = 'owner_webhook_alert' AND dedupe_key LIKE ?", `%${sub.id}-disabled-%`);
      expect(a).toHaveLength(1);
    });
    const [d] = await deliveriesOf(sub.id);
    expect(d.status).toBe("cancelled");
    await emailBounced(`${unique("guest")}@example.net`);
    await new Promise((r) => setTimeout(r, 2500));
    expect(await received(sub.name)).toHaveLength(1);
    expect(await deliveriesOf(sub.id)).toHaveLength(1);
  }, 40_000);

  it("429 with Retry-After, then a receiver slower than the time bound, then 200: both retried, the timeout recorded without a status", async () => {
    const sub = await subscribe(["email.bounced"], { plan: ["429:1", "slow:4000"] });
    await emailBounced(`${unique("guest")}@example.net`);
    const [delivery] = await deliveriesSettled(sub.id, 1, "delivered", { ms: 25_000 });
    const attempts = await attemptsOf(delivery.delivery_id);
    expect(attempts.map((a) => [a.status_code, a.outcome])).toEqual([
      [429, "retry"],
      [null, "retry"],
      [200, "delivered"],
    ]);
    expect(attempts[1].error).toBe("no answer within 1500 ms");
    expect(attempts[1].duration_ms).toBeGreaterThanOrEqual(1400);
    await disable(sub);
  }, 60_000);

  it("a redirect or another 4xx is not followed or hammered: dead after 3 attempts", async () => {
    const sub = await subscribe(["email.bounced"], { plan: ["302", "400", "400", "400"] });
    await emailBounced(`${unique("guest")}@example.net`);
    const [delivery] = await deliveriesSettled(sub.id, 1, "dead", { ms: 25_000 });
    const attempts = await attemptsOf(delivery.delivery_id);
    expect(attempts.map((a) => [a.status_code, a.outcome])).toEqual([
      [302, "retry"],
      [400, "retry"],
      [400, "dead"],
    ]);
    await disable(sub);
  }, 60_000);

  it("an unpaid checkout's follow-up and the email's sending reach the subscriber as checkout.follow_up_sent and email.sent", async () => {
    const sub = await subscribe(["checkout.follow_up_sent", "email.sent"]);
    const eventId = unique("evt_pb_");
    const prebookId = unique("PB_");
    const body = JSON.stringify({
      event_id: eventId,
      event_name: "booking.prebook",
      sandbox: false,
      request: JSON.stringify({ offerId: "OFFER", usePaymentSdk: true, clientReference: unique("trip_"), holder: { firstName: "Testa", lastName: unique("Guest"), email: `${unique("guest")}@example.com` } }),
      response: JSON.stringify({ data: { prebookId, hotelId: "lp_fake_1001", checkin: dateInDays(20), checkout: dateInDays(23), currency: "EUR", price: 540, transactionId: unique("tr_") } }),
    });
    const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(eventId));
    try {
      await instance.modify(async (m) => m.disableSleeps());
      expect((await postLiteapi(body)).status).toBe(202);
      await instance.waitForStatus("complete");
    } finally {
      await instance.dispose();
    }
    const key = `checkout_not_completed:${prebookId}`;
    await sendThrough(key);
    const got = await eventually(async () => {
      // Other client emails queued by earlier tests go out in the same client slots: only this
      // checkout's are looked at.
      const list = (await received(sub.name)).filter((x) => JSON.parse(x.body).data.dedupeKey === key);
      expect(list.map((x) => x.type).sort()).toEqual(["checkout.follow_up_sent", "email.sent"]);
      return list;
    }, { ms: 15_000 });
    for (const x of got) {
      expect(x.verified).toBe(true);
      expect(x.schemaErrors).toBeNull();
      expect(JSON.parse(x.body).data.dedupeKey).toBe(key);
    }
    const sent = JSON.parse(got.find((x) => x.type === "email.sent").body).data;
    expect(sent).toMatchObject({ kind: "checkout_not_completed", reference: prebookId, status: "sent", attempts: 1, reason: null });
    expect(sent.provider).toBeTruthy();
    await disable(sub);
  }, 60_000);

  it("faults: a queue message lost after the D1 record is sent again by the sweeper; a duplicate message makes no second POST; a stale dead letter never kills a redriven delivery", async () => {
    // 1. Lost: an event recorded and claimed in D1 whose queue send never happened (a crash
    //    between the two), due 20 minutes ago.
    const sub = await subscribe(["email.bounced"]);
    const eventId = `evt_${crypto.randomUUID().replace(/-/g, "")}`;
    const deliveryId = `${eventId}.${sub.id}`;
    const long = Date.now() - 20 * 60_000;
    const body = JSON.stringify({ id: eventId, type: "email.bounced", version: 1, createdAt: new Date(long).toISOString(), data: { email: "lost@example.net" } });
    await recordLostDelivery(eventId, body, sub, long);
    await sweep();
    await eventually(async () => {
      const [d] = await deliveriesOf(sub.id);
      expect(d).toMatchObject({ delivery_id: deliveryId, status: "delivered", attempts: 1 });
    }, { ms: 15_000 });
    const got = await received(sub.name);
    expect(got.map((x) => [x.id, x.verified, x.body])).toEqual([[eventId, true, body]]);
    expect(await rows("SELECT kind FROM repairs WHERE subject = ?", `${deliveryId}#1`)).toEqual([{ kind: "webhook_reenqueued" }]);
    // A second sweep finds nothing to do (delivered).
    await sweep();
    await new Promise((r) => setTimeout(r, 1500));
    expect(await received(sub.name)).toHaveLength(1);
    await disable(sub);

    // 2. Duplicate: a second message of the same delivery while the first attempt is in progress
    //    (the receiver takes 1 s) waits for it and then finds it delivered: one POST.
    const slow = await subscribe(["email.bounced"], { plan: ["slow:1000"] });
    await emailBounced(`${unique("guest")}@example.net`);
    const [pending] = await eventually(async () => {
      const ds = await deliveriesOf(slow.id);
      expect(ds).toHaveLength(1);
      return ds;
    }, { every: 10 });
    await env.WEBHOOKS.send({ deliveryId: pending.delivery_id, gen: 1 });
    await eventually(async () => {
      const [d] = await deliveriesOf(slow.id);
      expect(d.status).toBe("delivered");
    }, { ms: 15_000 });
    await new Promise((r) => setTimeout(r, 3000));
    expect(await received(slow.name)).toHaveLength(1);
    expect((await deliveriesOf(slow.id))[0].attempts).toBe(1);
    await disable(slow);

    // 3. Stale dead letter: a delivery dead in budget 0, redriven (budget 1) while the receiver
    //    still fails; a dead letter of budget 0 arriving now changes nothing.
    const failing = await subscribe(["email.bounced"]);
    await receiverPlan(failing.name, [], true);
    await emailBounced(`${unique("guest")}@example.net`);
    const [dead] = await eventually(async () => {
      const ds = await deliveriesOf(failing.id);
      expect(ds[0]?.status).toBe("dead");
      return ds;
    }, { ms: 30_000, every: 200 });
    expect((await api("POST", "/admin/webhooks/redrive", { deliveryId: dead.delivery_id })).status).toBe(200);
    await env.WEBHOOKS_DLQ.send({ deliveryId: dead.delivery_id, gen: 1, reason: "a stale dead letter" });
    // And a late main-queue message of the first generation makes no extra attempt.
    await env.WEBHOOKS.send({ deliveryId: dead.delivery_id, gen: 1 });
    await new Promise((r) => setTimeout(r, 1500));
    const [still] = await deliveriesOf(failing.id);
    expect(still).toMatchObject({ status: "pending", redrives: 1 });
    await receiverPlan(failing.name, [], false);
    await eventually(async () => {
      const [d] = await deliveriesOf(failing.id);
      expect(d).toMatchObject({ status: "delivered", redrives: 1 });
    }, { ms: 20_000, every: 200 });
    await disable(failing);

    // 4. A delivery that died of a 400 after its 3 attempts and whose dead letter was lost: the
    //    sweeper sends it again, and it goes back to the dead letters without another POST.
    const gone = await subscribe(["email.bounced"]);
    const lostId = `evt_${crypto.randomUUID().replace(/-/g, "")}`;
    await recordLostDelivery(lostId, "{}", gone, long, { attempts: 3, lastStatusCode: 400, claimGen: 1 });
    await sweep();
    await eventually(async () => {
      const [d] = await deliveriesOf(gone.id);
      expect(d).toMatchObject({ status: "dead", attempts: 3 });
    }, { ms: 15_000 });
    expect(await received(gone.name)).toEqual([]);
    await disable(gone);
  }, 120_000);

  it("refuses a bad subscriber with a clear error: not https, a private or loopback host, credentials, unknown types, no token", async () => {
    const cases = [
      [{ url: "http://hooks.example.com/in" }, "url", "https://"],
      [{ url: "https://10.1.2.3/in" }, "url", "not a public host"],
      [{ url: "https://192.168.0.10/in" }, "url", "not a public host"],
      [{ url: "https://[::1]/in" }, "url", "not a public host"],
      [{ url: "https://localhost/in" }, "url", "not a public host"],
      [{ url: "https://printer.local/in" }, "url", "not a public host"],
      [{ url: "https://user:pw@hooks.example.com/in" }, "url", "user name or password"],
      [{ url: "ftp://hooks.example.com/in" }, "url", "https://"],
      [{ url: "not a url" }, "url", "not a valid absolute URL"],
      [{ url: "https://hooks.example.com/in", eventTypes: ["booking.exploded"] }, "eventTypes", "unknown event type"],
    ];
    for (const [body, field, words] of cases) {
      const r = await api("POST", "/admin/webhooks/subscribers", body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.field).toBe(field);
      expect(r.body.message).toContain(words);
    }
    const noToken = await SELF.fetch("https://engine.test/admin/webhooks/subscribers", {
      method: "POST",
      body: JSON.stringify({ url: "https://hooks.example.com/in" }),
    });
    expect(noToken.status).toBe(401);
    const wrongMethod = await SELF.fetch("https://engine.test/admin/webhooks/redrive", { headers: OPERATOR });
    expect(wrongMethod.status).toBe(405);
    const ok = await api("POST", "/admin/webhooks/subscribers", { url: `${env.WEBHOOK_RECEIVER}/hook/nobody`, eventTypes: ["checkout.held", "*"] });
    expect(ok.status).toBe(201);
    expect(ok.body.eventTypes).toEqual(["*"]);
    const typed = await api("POST", "/admin/webhooks/subscribers", { url: "https://hooks.example.com/in", eventTypes: ["checkout.held", "checkout.held"] });
    expect(typed.body.eventTypes).toEqual(["checkout.held"]);
    await api("POST", `/admin/webhooks/subscribers/${typed.body.subscriberId}/disable`);
    await api("POST", `/admin/webhooks/subscribers/${ok.body.subscriberId}/disable`);
    const nope = await api("POST", "/admin/webhooks/subscribers/sub_nope/enable");
    expect(nope.status).toBe(404);
  });

  it("Email Service events from the queue: a hard bounce suppresses the address once; the same event twice changes nothing more; a soft bounce suppresses nothing; a malformed event is kept as rejected", async () => {
    const sub = await subscribe(["email.bounced"]);
    const who = `${unique("guest")}@example.net`;
    // Our record of a sent email, with the provider's message id (kept in angle brackets, as the
    // send_email binding gives it; the event names it bare: the same message).
    const messageId = `msg-${unique("m")}@example.com`;
    await env.DB.prepare(
      "INSERT INTO emails (dedupe_key, kind, audience, to_addr, subject, rank, status, provider, provider_message_id, message_id, attempts, created_at_ms, updated_at_ms) VALUES (?, 'booking_confirmation', 'client', ?, 's', 1, 'sent', 'cloudflare', ?, '<m@example.com>', 1, 0, 0)",
    ).bind(`booking_confirmation:${unique("BK")}`, who, `<${messageId}>`).run();
    const e = await emailBounced(who, { messageId });
    await emailBounced(who, { eventId: e.payload.eventId, messageId });
    await eventually(async () => {
      const s = await rows("SELECT reason, source, detail FROM suppressions WHERE email = ?", who);
      expect(s).toEqual([{ reason: "hard_bounce", source: "email_service_event", detail: "550 5.1.1 User unknown" }]);
      const raw = await rows("SELECT status, event_name FROM raw_events WHERE source = 'email_service' AND event_id = ?", e.payload.eventId);
      expect(raw).toEqual([{ status: "received", event_name: "message.bounced" }]);
      const mail = await rows("SELECT delivery_status FROM emails WHERE provider_message_id = ?", `<${messageId}>`);
      expect(mail).toEqual([{ delivery_status: "bounced" }]);
    }, { ms: 15_000 });
    // A late "delivered" never replaces the bounce; a complaint does (and suppresses as such).
    const later = (kind, extra) =>
      env.EMAIL_EVENTS.send({
        type: `cf.email.sending.message.${kind}`,
        source: { type: "email.sending", domain: "example.com" },
        payload: { eventId: crypto.randomUUID(), messageId, recipient: who, delivery: { status: kind }, ...extra },
        metadata: { eventSchemaVersion: 1, eventTimestamp: new Date().toISOString() },
      });
    await later("delivered", {});
    await new Promise((r) => setTimeout(r, 2500));
    expect(await rows("SELECT delivery_status FROM emails WHERE provider_message_id = ?", `<${messageId}>`)).toEqual([{ delivery_status: "bounced" }]);
    await later("complained", { complaint: { type: "abuse" } });
    await eventually(async () => {
      expect(await rows("SELECT delivery_status FROM emails WHERE provider_message_id = ?", `<${messageId}>`)).toEqual([{ delivery_status: "complained" }]);
      expect(await rows("SELECT reason FROM suppressions WHERE email = ?", who)).toEqual([{ reason: "complaint" }]);
    }, { ms: 10_000 });
    const bounced = await eventually(async () => {
      const list = await received(sub.name);
      expect(list).toHaveLength(2);
      return list;
    }, { ms: 10_000 });
    expect(bounced[0].schemaErrors).toBeNull();
    expect(JSON.parse(bounced[0].body).data).toMatchObject({ email: who, reason: "hard_bounce", provider: "email_service" });
    await new Promise((r) => setTimeout(r, 2000));
    // The bounce once (delivered twice) and the complaint: two events.
    expect((await received(sub.name)).map((x) => JSON.parse(x.body).data.reason)).toEqual(["hard_bounce", "complaint"]);

    const soft = `${unique("guest")}@example.net`;
    const s = await emailBounced(soft, { type: "soft" });
    await env.EMAIL_EVENTS.send({ type: "cf.email.sending.message.bounced", payload: { eventId: "bad", recipient: "not an address" } });
    await eventually(async () => {
      const raw = await rows("SELECT status FROM raw_events WHERE source = 'email_service' AND event_id = ?", s.payload.eventId);
      expect(raw).toEqual([{ status: "received" }]);
      const rejected = await rows("SELECT error FROM raw_events WHERE source = 'email_service' AND status = 'rejected'");
      expect(rejected.some((r) => r.error.includes("payload.recipient"))).toBe(true);
    }, { ms: 15_000 });
    expect(await rows("SELECT * FROM suppressions WHERE email = ?", soft)).toEqual([]);
    await disable(sub);
  }, 60_000);
});
