// Shared helpers for the end-to-end tests. Everything goes through the Worker's public surface
// (SELF.fetch), its bindings (env.DB, env.OUTBOX) and the local SMTP server's REST API.
import { env, SELF, runDurableObjectAlarm } from "cloudflare:test";
import confirmed from "../fixtures/liteapi-booking-confirmed.json";

export const TOKEN = "test-liteapi-token";

let counter = 0;
/** A unique suffix per call, so tests never collide on event ids, booking ids or addresses. */
export function unique(prefix) {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter}`;
}

/**
 * A liteAPI `booking.book` delivery built from the fixture, with its own event id, booking id and
 * guest email. Returns the raw body text and the ids.
 */
export function bookingDelivery({ eventId = unique("evt_"), bookingId = unique("BK_"), email } = {}) {
  const envelope = structuredClone(confirmed);
  delete envelope._modeled_on;
  envelope.event_id = eventId;
  const response = JSON.parse(envelope.response);
  response.data.bookingId = bookingId;
  if (email) {
    response.data.holder.email = email;
  }
  envelope.response = JSON.stringify(response);
  return { body: JSON.stringify(envelope), eventId, bookingId };
}

export function instanceIdFor(eventId) {
  return `e-liteapi-x-${eventId}`;
}

export async function postLiteapi(body, { token = TOKEN, headers = {} } = {}) {
  const h = { "content-type": "application/json", ...headers };
  if (token !== null) h.authorization = token;
  return SELF.fetch("https://engine.test/webhooks/liteapi", { method: "POST", headers: h, body });
}

export function outboxStub() {
  return env.OUTBOX.getByName("outbox");
}

export async function outboxState() {
  const r = await outboxStub().fetch("https://outbox/state");
  return r.json();
}

/**
 * Runs the outbox alarm directly until nothing is in flight: no item `sending` and no owner alert
 * `queued`. (The runtime may also fire the alarm on its own; the outbox ignores an overlapping run.)
 */
export async function runOutbox({ ms = 10_000 } = {}) {
  const until = Date.now() + ms;
  for (;;) {
    await runDurableObjectAlarm(outboxStub());
    const state = await outboxState();
    const busy = state.items.some(
      (i) => i.status === "sending" || (i.status === "queued" && i.audience === "owner"),
    );
    if (!busy) return state;
    if (Date.now() > until) throw new Error(`outbox did not settle: ${JSON.stringify(state.items.slice(0, 5))}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function rows(sql, ...binds) {
  const r = await env.DB.prepare(sql).bind(...binds).all();
  return r.results;
}

/** Messages the local SMTP server (maildev) received, newest last. */
export async function smtpInbox() {
  const r = await fetch(`${env.MAILDEV_API}/api/email`);
  if (!r.ok) throw new Error(`maildev API answered ${r.status}`);
  return r.json();
}

export async function eventually(check, { ms = 10_000, every = 50 } = {}) {
  const until = Date.now() + ms;
  let last;
  while (Date.now() < until) {
    try {
      return await check();
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, every));
  }
  throw last;
}

/**
 * Lets the client slot open now, as if the 150–160 s gap had passed (the pacing rule itself is
 * asserted separately), then runs the outbox.
 */
export async function passClientGap() {
  const { runInDurableObject } = await import("cloudflare:test");
  await runInDurableObject(outboxStub(), async (_instance, state) => {
    state.storage.sql.exec("UPDATE state SET value = 0 WHERE key = 'next_slot_at_ms'");
  });
  return runOutbox();
}

/** Passes client gaps until `key` left the queue (at most `max` slots). */
export async function sendThrough(key, max = 20) {
  for (let i = 0; i < max; i++) {
    const state = await passClientGap();
    const it = state.items.find((x) => x.dedupe_key === key);
    if (it && !["queued", "waiting", "sending"].includes(it.status)) return state;
  }
  throw new Error(`${key} was not sent within ${max} client slots`);
}
