// The daily digest's "what waits now" sections, each with its admin link: refunds waiting for
// the owner (awaiting the owner or failed and offered again; a done one is not counted), dead
// outbound webhook deliveries (not the delivered ones), and the routes the operator paused, as
// the outbox says ("… paused until … UTC"). Its own file: a fresh D1 and outbox, so the day's one
// digest is this test's.
import { env } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { operatorRoute, outboxStub, rows, sweep, unique } from "../e2e/helpers.mjs";

const H = 3_600_000;
const today = () => new Date().toISOString().slice(0, 10);

async function run(sql, ...binds) {
  await env.DB.prepare(sql).bind(...binds).run();
}

/** A compensation whose refund step is `status` since `at`. */
async function refund(status, guest, trip, at) {
  const id = unique("cmp_");
  await run(
    "INSERT INTO compensations (compensation_id, cause, booking_id, guest_email, guest_name, trip, source, event_id, event_name, reason, state, created_at_ms, updated_at_ms) VALUES (?, 'supplier_failed', ?, 'guest@example.com', ?, ?, 'liteapi', ?, 'booking.failed', 'no rooms', 'arranging', ?, ?)",
    id,
    unique("BK_"),
    guest,
    trip,
    unique("evt_"),
    at,
    at,
  );
  await run("INSERT INTO compensation_steps (compensation_id, step, position, status, updated_at_ms) VALUES (?, 'refund', 3, ?, ?)", id, status, at);
  return id;
}

/** One outbound delivery of a new event to `sub`, in `status`. */
async function delivery(sub, status, at) {
  const event = unique("evt_");
  await run("INSERT INTO webhook_events (event_id, event_type, body, created_at_ms) VALUES (?, 'email.bounced', '{}', ?)", event, at);
  await run(
    "INSERT INTO webhook_deliveries (delivery_id, event_id, subscriber_id, status, attempts, created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, 4, ?, ?)",
    `${event}.${sub}`,
    event,
    sub,
    status,
    at,
    at,
  );
}

async function queued(key) {
  const r = await outboxStub().fetch(`https://outbox/email?dedupe_key=${encodeURIComponent(key)}`);
  return r.status === 200 ? r.json() : null;
}

describe("the owner's daily digest: what waits now", () => {
  it("refunds waiting, dead webhook deliveries and paused routes each get their line and admin link", async () => {
    const at = Date.now() - 3 * H;
    const awaiting = await refund("awaiting_owner", "Ana Ruiz", "Hotel Sol, 2030-02-01 to 2030-02-03", at);
    const failed = await refund("failed", "Bo Lee", null, at + H);
    const done = await refund("done", "Cy Done", null, at);
    const sub = unique("sub_");
    await run("INSERT INTO webhook_subscribers (subscriber_id, url, secret, event_types, created_at_ms, updated_at_ms) VALUES (?, 'https://hooks.example.net/x', 'whsec_x', 'email.bounced', ?, ?)", sub, at, at);
    await delivery(sub, "dead", at);
    await delivery(sub, "dead", at);
    await delivery(sub, "delivered", at);
    const smtp = await operatorRoute("smtp", "pause", 90);
    expect(smtp.status).toBe(200);
    const smtpUntil = (await smtp.json()).pausedUntilMs;
    const main = await operatorRoute("main", "pause", 30);
    expect(main.status).toBe(200);
    const mainUntil = (await main.json()).pausedUntilMs;
    const utc = (ms) => new Date(ms).toISOString().slice(0, 16).replace("T", " ") + " UTC";

    await sweep();
    const key = `owner_digest:${today()}`;
    expect(await rows("SELECT dedupe_key FROM emails WHERE kind = 'owner_digest'")).toEqual([{ dedupe_key: key }]);
    const d = await queued(key);
    expect(d.subject).toMatch(/^Daily digest \d{4}-\d\d-\d\d: 0 bookings, 2 waiting for you$/);
    // Each section: its title, then its admin link on the next line.
    const section = (title, link) => expect(d.text, title).toContain(`${title}\n  ${link}\n`);
    section("Refunds waiting for your decision: 2", "https://engine.test/admin/refunds");
    section("Outbound webhook deliveries dead: 2", "https://engine.test/admin/deliveries");
    section("Routes paused: 2", "https://engine.test/admin/queue");
    // The refunds, oldest first, each linking the refunds page; the one done is not there.
    const a = d.text.indexOf(`- ${awaiting} — waiting since `);
    const f = d.text.indexOf(`- ${failed} — waiting since `);
    expect(a).toBeGreaterThan(-1);
    expect(f).toBeGreaterThan(a);
    expect(d.text).toContain("— Ana Ruiz, Hotel Sol, 2030-02-01 to 2030-02-03\n    https://engine.test/admin/refunds\n");
    expect(d.text).toContain("— Bo Lee\n    https://engine.test/admin/refunds\n");
    expect(d.text).not.toContain(done);
    expect(d.text).toContain(`- The main provider paused until ${utc(mainUntil)}`);
    expect(d.text).toContain(`- SMTP failover paused until ${utc(smtpUntil)}`);
    for (const link of ["/admin/refunds", "/admin/deliveries", "/admin/queue"]) {
      expect(d.html, link).toContain(`href="https://engine.test${link}"`);
    }
    expect(d.html).toContain("Outbound webhook deliveries dead: 2");
    expect(d.html).toContain("SMTP failover paused until");

    await operatorRoute("main", "resume");
    await operatorRoute("smtp", "resume");
  });
});
