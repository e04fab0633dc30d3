// The content lock checks what the engine wrote, not what the guest or the hotel is called:
// supplier names that are internal words or template syntax get their emails, owner alerts
// are never silenced, and a blocked email is released or rejected by the operator once.
import { env, SELF, introspectWorkflowInstance } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  enqueueEmail,
  futureBooking,
  instanceIdFor,
  item,
  outboxState,
  postLiteapi,
  rows,
  runOutbox,
  sendThrough,
  unique,
} from "./helpers.mjs";

const OPERATOR = "Bearer test-operator-token-0123456789abcdef";

/** A future liteAPI booking whose hotel and guest are called as given; waits for its journey. */
async function bookAs({ hotel, firstName, lastName }) {
  const d = futureBooking({ email: `${unique("lock")}@example.com` });
  const envelope = JSON.parse(d.body);
  const response = JSON.parse(envelope.response);
  if (hotel !== undefined) response.data.hotel.name = hotel;
  if (firstName !== undefined) response.data.holder.firstName = firstName;
  if (lastName !== undefined) response.data.holder.lastName = lastName;
  envelope.response = JSON.stringify(response);
  const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(d.eventId));
  try {
    await instance.modify((m) => m.disableSleeps());
    expect((await postLiteapi(JSON.stringify(envelope))).status).toBe(202);
    await instance.waitForStatus("complete");
  } finally {
    await instance.dispose();
  }
  return d;
}

async function inspect(key) {
  const r = await SELF.fetch(`https://engine.test/admin/outbox/email?dedupe_key=${encodeURIComponent(key)}`, {
    headers: { authorization: OPERATOR },
  });
  expect(r.status).toBe(200);
  return r.json();
}

function release(body, { authorization = OPERATOR } = {}) {
  return SELF.fetch("https://engine.test/admin/outbox/release", {
    method: "POST",
    headers: { authorization, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** A client email with no render-time verdict, stored straight in the outbox and in D1 (as a claim would). */
async function blockedEmail(text) {
  const to = `${unique("held")}@example.com`;
  const key = await enqueueEmail(to, text);
  const now = Date.now();
  await env.DB.prepare(
    "INSERT INTO emails (dedupe_key, kind, audience, booking_id, to_addr, subject, rank, status, message_id, attempts, created_at_ms, updated_at_ms) VALUES (?1, 'booking_confirmation', 'client', ?2, ?3, 'Your stay is confirmed', 1, 'queued', ?4, 0, ?5, ?5)",
  )
    .bind(key, key.split(":")[1], to, `<${key}@example.com>`, now)
    .run();
  const state = await sendThrough(key);
  expect(item(state, key).status).toBe("blocked");
  return key;
}

describe("content lock on supplier values", () => {
  it("a guest surnamed Wrangler at the Outbox Harbour Hotel gets the confirmation, and the owner the alert", async () => {
    const d = await bookAs({ hotel: "Outbox Harbour Hotel", firstName: "Workflow", lastName: "Wrangler" });
    const key = `booking_confirmation:${d.bookingId}`;
    const state = await sendThrough(key);
    expect(item(state, key)).toMatchObject({ status: "sent", attempts: 1 });
    expect(item(state, `owner_new_booking:${d.bookingId}`)?.status).toBe("sent");
    const sent = await inspect(key);
    expect(sent.text).toContain("Outbox Harbour Hotel");
    expect(sent.text).toContain("Workflow");
    expect(sent.lock).toEqual({ linksRemoved: 0 });
    expect(await rows("SELECT status FROM emails WHERE dedupe_key = ?", key)).toEqual([{ status: "sent" }]);
  });

  it("a hotel name with template syntax gets its confirmation and the owner alert (defanged, not blocked)", async () => {
    const hotel = "The {{name}} ${x} [[y]] Lodge";
    const d = await bookAs({ hotel });
    const key = `booking_confirmation:${d.bookingId}`;
    const state = await sendThrough(key);
    expect(item(state, key).status).toBe("sent");
    const guest = await inspect(key);
    expect(guest.text).toContain(hotel);
    const alertKey = `owner_new_booking:${d.bookingId}`;
    expect(item(state, alertKey)?.status).toBe("sent");
    // No alert about a blocked email: nothing was blocked.
    expect(state.items.filter((i) => i.dedupe_key.startsWith("owner_email_failed:") && i.dedupe_key.includes(d.bookingId))).toEqual([]);
  });

  it("a link to the engine's admin inside a supplier value is removed from the guest's email", async () => {
    const d = await bookAs({ hotel: "Harbour https://engine.test/admin/outbox Hotel" });
    const key = `booking_confirmation:${d.bookingId}`;
    const state = await sendThrough(key);
    expect(item(state, key).status).toBe("sent");
    const guest = await inspect(key);
    expect(guest.text).toContain("Harbour [link removed] Hotel");
    expect(`${guest.subject} ${guest.text} ${guest.html}`).not.toContain("/admin");
    expect(guest.lock.linksRemoved).toBeGreaterThanOrEqual(1);
  });
});

describe("operator release of a blocked email", () => {
  it("releases a blocked email once: it goes out, the decision is recorded, a second release is refused", async () => {
    const key = await blockedEmail("Hello Outbox guest, your stay is confirmed.");
    let state = await outboxState();
    expect(item(state, key).last_error).toMatch(/content lock: in the email as written/);
    expect(item(state, key).last_error).toMatch(/internal name: outbox/);
    state = await runOutbox();
    const alert = item(state, `owner_email_failed:${key}`);
    expect(alert?.status).toBe("sent");

    expect((await release({ dedupeKey: key, decision: "release", reason: "x" }, { authorization: "Bearer wrong" })).status).toBe(401);
    const bad = await release({ dedupeKey: key, decision: "send", reason: "x" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).field).toBe("decision");

    const r = await release({ dedupeKey: key, decision: "release", reason: "guest name, not a leak", by: "ana" });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ dedupeKey: key, decision: "release", status: "queued", by: "ana" });
    state = await sendThrough(key);
    expect(item(state, key)).toMatchObject({ status: "sent", attempts: 1 });
    const recorded = await rows(
      "SELECT status, operator_decision, operator_by, operator_reason, operator_at_ms IS NOT NULL AS at FROM emails WHERE dedupe_key = ?",
      key,
    );
    expect(recorded).toEqual([{ status: "sent", operator_decision: "release", operator_by: "ana", operator_reason: "guest name, not a leak", at: 1 }]);

    const again = await release({ dedupeKey: key, decision: "release", reason: "again" });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: "conflict", status: "sent", decision: "release" });
    const missing = await release({ dedupeKey: "booking_confirmation:nope", decision: "reject", reason: "x" });
    expect(missing.status).toBe(404);
  });

  it("rejects a blocked email: it is never sent, and cannot be released afterwards", async () => {
    const key = await blockedEmail("Hi {{ guest_first_name }}");
    const r = await release({ dedupeKey: key, decision: "reject", reason: "broken template" });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ decision: "reject", status: "skipped", by: "operator" });
    const state = await runOutbox();
    expect(item(state, key)).toMatchObject({ status: "skipped", attempts: 0 });
    expect(item(state, key).last_error).toMatch(/rejected by operator/);
    const later = await release({ dedupeKey: key, decision: "release", reason: "changed my mind" });
    expect(later.status).toBe(409);
    expect(await rows("SELECT status, operator_decision FROM emails WHERE dedupe_key = ?", key)).toEqual([
      { status: "skipped", operator_decision: "reject" },
    ]);
  });

  it("refuses to release an email that is not blocked", async () => {
    const d = await bookAs({});
    const key = `owner_new_booking:${d.bookingId}`;
    await runOutbox();
    const r = await release({ dedupeKey: key, decision: "release", reason: "x" });
    expect(r.status).toBe(409);
    expect((await r.json()).status).toBe("sent");
  });
});
