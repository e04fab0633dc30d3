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

/** `YYYY-MM-DD` of today + `days` (UTC). */
export function dateInDays(days, from = Date.now()) {
  return new Date(from + days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * A liteAPI delivery of `eventName` whose `response.data` is `data` (request `{}`), with a fresh
 * event id.
 */
export function liteapiEvent(eventName, data, { eventId = unique("evt_") } = {}) {
  return {
    eventId,
    body: JSON.stringify({
      event_id: eventId,
      event_name: eventName,
      sandbox: false,
      request: JSON.stringify({ bookingId: data.bookingId }),
      response: JSON.stringify({ data }),
    }),
  };
}

/** A booking.book for a stay `checkinInDays` from now, `nights` long. */
export function futureBooking({ checkinInDays = 30, nights = 3, hotelId = "lp_fake_1001", ...rest } = {}) {
  const d = bookingDelivery(rest);
  const envelope = JSON.parse(d.body);
  const response = JSON.parse(envelope.response);
  const checkin = dateInDays(checkinInDays);
  const checkout = dateInDays(checkinInDays + nights);
  Object.assign(response.data, { checkin, checkout });
  response.data.hotel.hotelId = hotelId;
  envelope.response = JSON.stringify(response);
  return { ...d, body: JSON.stringify(envelope), checkin, checkout };
}

const enc = new TextEncoder();

async function hmac(keyBytes, message) {
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(message)));
}

/** `X-Duffel-Signature` for `body` at `t` (unix s) with `secret`. */
export async function duffelSignature(body, secret = "test-duffel-secret", t = Math.floor(Date.now() / 1000)) {
  const mac = await hmac(enc.encode(secret), `${t}.${body}`);
  return `t=${t},v1=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export async function postDuffel(body, { signature } = {}) {
  const sig = signature ?? (await duffelSignature(body));
  return SELF.fetch("https://engine.test/webhooks/duffel", {
    method: "POST",
    headers: { "content-type": "application/json", "x-duffel-signature": sig },
    body,
  });
}

export const GENERIC_SECRET = "whsec_dGVzdC1nZW5lcmljLXNlY3JldC0wMTIzNDU2Nzg5";

/** Posts a Standard Webhooks delivery to /webhooks/generic, signed with `secret`. */
export async function postGeneric(body, { id = unique("msg_"), secret = GENERIC_SECRET, t = Math.floor(Date.now() / 1000) } = {}) {
  const key = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
  const mac = await hmac(key, `${id}.${t}.${body}`);
  const signature = `v1,${btoa(String.fromCharCode(...mac))}`;
  const response = await SELF.fetch("https://engine.test/webhooks/generic", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(t),
      "webhook-signature": signature,
    },
    body,
  });
  return { response, id };
}
