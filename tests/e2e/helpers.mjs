// Shared helpers for the end-to-end tests. Everything goes through the Worker's public surface
// (SELF.fetch), its bindings (env.DB, env.OUTBOX) and the local SMTP server's REST API.
import {
  abortAllDurableObjects,
  env,
  SELF,
  runDurableObjectAlarm,
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from "cloudflare:test";
import Engine from "../../src/entry.mjs";
import confirmed from "../fixtures/liteapi-booking-confirmed.json";
import { dateInDays, unique } from "./payloads.mjs";

export { dateInDays, unique };

export const TOKEN = "test-liteapi-token";

/**
 * A liteAPI `booking.book` delivery built from the fixture, with its own event id, booking id and
 * guest email, for a stay 30 days from now. Returns the raw body text and the ids.
 */
export function bookingDelivery({ eventId = unique("evt_"), bookingId = unique("BK_"), email } = {}) {
  const envelope = structuredClone(confirmed);
  delete envelope._modeled_on;
  envelope.event_id = eventId;
  const response = JSON.parse(envelope.response);
  response.data.bookingId = bookingId;
  // A stay in the future: a stay already over gets no guest email.
  Object.assign(response.data, { checkin: dateInDays(30), checkout: dateInDays(33) });
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
 *
 * The runtime may fire the outbox alarm on its own at the same moment; the outbox answers an
 * overlapping run "busy" (and that run may have read the slot as still closed). So the first run
 * calls the alarm handler directly and, while it answers "busy", tries again (at most 40 times,
 * 25 ms apart) before the usual runs until nothing is in flight.
 */
export async function passClientGap() {
  const { runInDurableObject } = await import("cloudflare:test");
  const stub = outboxStub();
  await runInDurableObject(stub, async (_instance, state) => {
    state.storage.sql.exec("UPDATE state SET value = 0 WHERE key = 'next_slot_at_ms'");
  });
  for (let i = 0; i < 40; i++) {
    // Unlike runDurableObjectAlarm, which runs the handler only while an alarm is scheduled (the
    // runtime's own run has already taken it) and drops its answer. A failing run throws, as there.
    const answer = await runInDurableObject(stub, async (instance) => (await instance.alarm()).text());
    if (answer !== "busy") break;
    await new Promise((r) => setTimeout(r, 25));
  }
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

/** The generic source's partners of the test configuration (engine-config.mjs) and their keys. */
export const PARTNERS = {
  acme: ["whsec_dGVzdC1wYXJ0bmVyLWFjbWUta2V5LW9uZS0wMTIzNDU2", "whsec_dGVzdC1wYXJ0bmVyLWFjbWUta2V5LXR3by0wMTIzNDU2"],
  globex: ["whsec_dGVzdC1wYXJ0bmVyLWdsb2JleC1rZXktMDEyMzQ1Njc="],
};

/** The Journey instance id of an event, as `InstanceId::for_event` derives it (src/domain/ids.rs). */
export async function instanceIdOf(source, eventId) {
  const direct = `e-${source}-x-${eventId}`;
  if (/^[A-Za-z0-9_-]+$/.test(eventId) && direct.length <= 100) return direct;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(eventId)));
  return `e-${source}-h-${[...digest].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Posts a Standard Webhooks delivery to /webhooks/generic, signed with `secret`. */
export async function postGeneric(body, { id = unique("msg_"), secret = GENERIC_SECRET, t = Math.floor(Date.now() / 1000), extraSignatures = [] } = {}) {
  const key = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
  const mac = await hmac(key, `${id}.${t}.${body}`);
  const signature = [...extraSignatures, `v1,${btoa(String.fromCharCode(...mac))}`].join(" ");
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

/**
 * Waits until a booking's confirmation and owner alert are in the outbox. The stay is ahead, so
 * its journey then sleeps (until the arrival guide) instead of completing.
 */
export async function handedOver(bookingId) {
  const { expect } = await import("vitest");
  await eventually(async () => {
    const keys = (await outboxState()).items.map((i) => i.dedupe_key);
    expect(keys).toEqual(expect.arrayContaining([`booking_confirmation:${bookingId}`, `owner_new_booking:${bookingId}`]));
  }, { ms: 30_000 });
}

/** Posts a `booking.book` delivery and waits until its journey has handed its first emails over and sleeps; returns the ids. */
export async function book(options) {
  const { introspectWorkflowInstance } = await import("cloudflare:test");
  const { expect } = await import("vitest");
  const d = bookingDelivery(options);
  const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(d.eventId));
  try {
    expect((await postLiteapi(d.body)).status).toBe(202);
    await handedOver(d.bookingId);
  } finally {
    await instance.dispose();
  }
  return d;
}

/**
 * The outbox killed while it hands email `key` over (its alarm hangs after the hand-over: `key`
 * must be `sending`), then its alarm run again on a fresh instance, as the platform retries an
 * interrupted alarm (at-least-once), until `key` is `status`. Returns the outbox's state then.
 */
export async function killMidSendThenRetry(key, status) {
  const { expect } = await import("vitest");
  expect(item(await outboxState(), key).status).toBe("sending");
  await abortAllDurableObjects();
  return eventually(async () => {
    await runDurableObjectAlarm(outboxStub());
    const s = await outboxState();
    expect(item(s, key).status).toBe(status);
    return s;
  });
}

/**
 * Posts liteAPI `body`, whose journey is workflow `instance`, with the journey's sleeps skipped
 * and its step `held` failing three times first (the engine retries it with backoff: 2 s, 4 s,
 * 8 s), then waits for the result of step `reached`: the test acts while `held` is held back.
 */
export async function startHeldBack(instance, body, { held, reached }) {
  const { expect } = await import("vitest");
  await instance.modify(async (m) => {
    await m.disableSleeps();
    await m.mockStepError({ name: held }, new Error("held back by the test"), 3);
  });
  expect((await postLiteapi(body)).status).toBe(202);
  await instance.waitForStepResult({ name: reached });
}

/** The queue item of `key` in an outbox state. */
export function item(state, key) {
  return state.items.find((i) => i.dedupe_key === key);
}

/** The dedupe key of the one queue item whose key starts with `prefix`. */
export function keyStartingWith(state, prefix) {
  const keys = state.items.map((i) => i.dedupe_key).filter((k) => k.startsWith(prefix));
  if (keys.length !== 1) throw new Error(`expected one key starting with ${prefix}, found ${JSON.stringify(keys)}`);
  return keys[0];
}

/** `[provider, outcome]` of every attempt of a queue item, oldest first. */
export function tries(state, it) {
  return state.attempts
    .filter((t) => t.seq === it.seq)
    .sort((a, b) => a.attempt - b.attempt)
    .map((t) => [t.provider, t.outcome]);
}

/** Enqueues a client booking email straight into the outbox; returns its dedupe key. */
export async function enqueueEmail(to, text = "Hello, your stay is confirmed.", extra = {}) {
  const bookingId = unique("BK_");
  const key = `booking_confirmation:${bookingId}`;
  const email = {
    dedupeKey: key,
    kind: "booking_confirmation",
    audience: "client",
    rank: "booking",
    bookingId,
    to,
    subject: "Your stay is confirmed",
    text,
    html: `<p>${text}</p>`,
    messageId: `<${bookingId.toLowerCase()}@example.com>`,
    ...extra,
  };
  const r = await outboxStub().fetch("https://outbox/enqueue", { method: "POST", body: JSON.stringify(email) });
  const answer = await r.json();
  if (answer.status !== "queued") throw new Error(`enqueue of ${key} answered ${JSON.stringify(answer)}`);
  return key;
}

/**
 * Enqueues an owner alert of `kind` (audience `owner`, rank `urgent`, to owner@example.com) straight
 * into the outbox under dedupe key `key` (`<kind or label>:<id>`), its HTML one paragraph of `text`
 * and its Message-ID made of the key's id; throws unless the outbox queued it.
 */
export async function enqueueOwnerAlert(key, kind, subject, text) {
  const email = {
    dedupeKey: key,
    kind,
    audience: "owner",
    rank: "urgent",
    to: "owner@example.com",
    subject,
    text,
    html: `<p>${text}</p>`,
    messageId: `<${key.split(":")[1].toLowerCase()}@example.com>`,
  };
  const r = await outboxStub().fetch("https://outbox/enqueue", { method: "POST", body: JSON.stringify(email) });
  const answer = await r.json();
  if (answer.status !== "queued") throw new Error(`enqueue of ${key} answered ${JSON.stringify(answer)}`);
}

/**
 * Stores the booking of an email `enqueueEmail` queued (`key` = `booking_confirmation:<booking>`)
 * as `source`'s, for guest `to`: the outbox reads a booking's owner when judging a probe (two
 * emails share no supplier text only when their bookings have different owners).
 */
export async function storeBookingOf(key, to, source) {
  const at = Date.now();
  await env.DB.prepare("INSERT OR IGNORE INTO contacts (email, created_at_ms, updated_at_ms) VALUES (?1, ?2, ?2)").bind(to, at).run();
  await env.DB.prepare(
    "INSERT INTO bookings (booking_id, source, kind, contact_email, status, details_json, created_at_ms, updated_at_ms) VALUES (?1, ?2, 'hotel', ?3, 'CONFIRMED', '{}', ?4, ?4)",
  ).bind(key.split(":")[1], source, to, at).run();
}

/**
 * Gives `key` its client turn and waits until that turn ended (not `queued` or `sending`). The
 * runtime may fire the alarm on its own; an overlapping run is skipped by the outbox, so this
 * retries until the item moved (and, if given, made `attempts` attempts).
 */
export async function turn(key, attempts) {
  return eventually(async () => {
    const s = await passClientGap();
    const it = item(s, key);
    if (!it || ["queued", "sending"].includes(it.status)) throw new Error(`${key} is ${it?.status}`);
    if (attempts !== undefined && it.attempts !== attempts) throw new Error(`${key}: ${it.attempts} attempts, want ${attempts}`);
    return s;
  });
}

/** Ends the backoff of `key` now, as if its retry time had come. */
export async function endBackoff(key) {
  const { runInDurableObject } = await import("cloudflare:test");
  await runInDurableObject(outboxStub(), async (_o, st) => {
    st.storage.sql.exec("UPDATE queue SET not_before_ms = 0 WHERE dedupe_key = ? AND status = 'waiting'", key);
  });
}

/** Sets (or with `null` deletes) one value of the outbox's `state` table. */
export async function setOutboxState(key, value) {
  const { runInDurableObject } = await import("cloudflare:test");
  await runInDurableObject(outboxStub(), async (_o, st) => {
    if (value === null) st.storage.sql.exec("DELETE FROM state WHERE key = ?", key);
    else st.storage.sql.exec("INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value);
  });
}

/**
 * Madrid's UTC offset in hours at a morning (after 01:00Z) of `date` + `days`: 2 from the last
 * Sunday of March to the day before the last Sunday of October (EU summer time, Directive
 * 2000/84/EC: both changes at 01:00 UTC), else 1. Independent of the engine's tz data.
 */
export function madridOffsetHours(date, days) {
  const [y, m, d] = date.split("-").map(Number);
  const day = Date.UTC(y, m - 1, d + days);
  const year = new Date(day).getUTCFullYear();
  const lastSunday = (month) => {
    const end = new Date(Date.UTC(year, month + 1, 0));
    return Date.UTC(year, month, end.getUTCDate() - end.getUTCDay());
  };
  return day >= lastSunday(2) && day < lastSunday(9) ? 2 : 1;
}

/**
 * Posts a liteAPI delivery (expects 202) and runs its journey to completion with sleeps and retry
 * delays off; `modify` can add more instance controls (e.g. step mocks). Returns the journey's
 * output.
 */
export async function runLiteapi(delivery, modify = async () => {}) {
  const { introspectWorkflowInstance } = await import("cloudflare:test");
  const { expect } = await import("vitest");
  const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(delivery.eventId));
  try {
    await instance.modify(async (m) => {
      await m.disableSleeps();
      await m.disableRetryDelays();
      await modify(m);
    });
    const r = await postLiteapi(delivery.body);
    expect(r.status, await r.clone().text()).toBe(202);
    await instance.waitForStatus("complete");
    return await instance.getOutput();
  } finally {
    await instance.dispose();
  }
}

/** UTC ms of `date` (YYYY-MM-DD) + `days` at hh:mm UTC. */
export function utc(date, days, hh, mm) {
  const [y, m, d] = date.split("-").map(Number);
  return Date.UTC(y, m - 1, d + days, hh, mm);
}

/** One cron tick through the Worker's exported scheduled handler (as the runtime calls it). */
export async function sweep() {
  const ctx = createExecutionContext();
  const controller = createScheduledController({ cron: "*/5 * * * *", scheduledTime: new Date() });
  await Engine.prototype.scheduled.call({ env, ctx }, controller);
  await waitOnExecutionContext(ctx);
}

let adminIp = 0;

/**
 * Signs the owner into the admin pages (the test accounts of engine-config.mjs; a fresh client IP
 * each time, so the failed-login limit never interferes); returns the session cookie.
 */
export async function adminCookie() {
  adminIp += 1;
  const r = await SELF.fetch("https://engine.test/admin/login", {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": `203.0.113.${adminIp % 250}` },
    body: new URLSearchParams({ account: "owner", password: "test-admin-password-1", next: "/admin" }),
  });
  if (r.status !== 303) throw new Error(`admin sign-in answered ${r.status}: ${await r.text()}`);
  return r.headers.get("set-cookie").split(";")[0];
}

/** An admin page's HTML, signed in with `cookie`. */
export async function adminPage(path, cookie) {
  const r = await SELF.fetch(`https://engine.test${path}`, { redirect: "manual", headers: { cookie } });
  if (r.status !== 200) throw new Error(`${path} answered ${r.status}`);
  return r.text();
}

/** Pauses (`action: "pause"`, for `minutes`) or resumes a route of the outbox through the operator API. */
export function operatorRoute(provider, action, minutes) {
  return SELF.fetch("https://engine.test/admin/outbox/provider", {
    method: "POST",
    headers: { authorization: "Bearer test-operator-token-0123456789abcdef", "content-type": "application/json" },
    body: JSON.stringify(minutes === undefined ? { provider, action } : { provider, action, minutes }),
  });
}

/** The nonce in a confirmation page's form, or null when the page has no form. */
export function formNonce(html) {
  return /name="nonce" value="([^"]+)"/.exec(html)?.[1] ?? null;
}

/**
 * Posts an owner action link as its confirmation page's own form does: opens the page (GET),
 * then POSTs the nonce it carries from this site (`Origin`, `Sec-Fetch-Site: same-origin`).
 * `nonce` / `headers` override what is sent (to forge a post).
 */
export async function submitActionForm(url, { nonce, headers = {} } = {}) {
  const page = await SELF.fetch(url);
  const carried = nonce === undefined ? formNonce(await page.text()) : nonce;
  const body = carried === null ? "" : new URLSearchParams({ nonce: carried }).toString();
  return SELF.fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: new URL(url).origin,
      "sec-fetch-site": "same-origin",
      ...headers,
    },
    body,
  });
}

/**
 * Seeds a checkout attempt and an open card-testing hold on it, made `hoursAgo` hours ago (as
 * the checkout journey records one); returns the hold id.
 */
export async function seedHold(hoursAgo) {
  const id = unique("hold_");
  const prebook = unique("PB_");
  const at = Date.now() - hoursAgo * 3_600_000;
  const details = { prebook_id: prebook, email: "tester@example.com", guest_name: { first_name: "Card", last_name: "Tester" }, hotel_name: "Example Harbour Hotel" };
  await env.DB.prepare(
    "INSERT INTO checkout_attempts (prebook_id, email, guest_name, attempt_day, attempted_at_ms, details_json, hold_id) VALUES (?, 'tester@example.com', 'card tester', ?, ?, ?, ?)",
  )
    .bind(prebook, new Date(at).toISOString().slice(0, 10), at, JSON.stringify(details), id)
    .run();
  await env.DB.prepare(
    "INSERT INTO holds (hold_id, status, reason, prebook_id, created_at_ms) VALUES (?, 'held', 'The email tester@example.com was used under 3 different names today (UTC).', ?, ?)",
  )
    .bind(id, prebook, at)
    .run();
  return id;
}

/**
 * A message as Email Routing hands it to the Worker's `email()` handler (the
 * ForwardableEmailMessage shape: envelope `from` / `to`, `raw` as a stream in 64 KiB chunks,
 * `rawSize`, `setReject`), for `deliverInbound`. `rejected` holds the reason given to setReject.
 */
export function inboundMessage(from, to, raw) {
  const bytes = typeof raw === "string" ? new TextEncoder().encode(raw) : raw;
  let offset = 0;
  const message = {
    from,
    to,
    headers: new Headers(),
    rawSize: bytes.length,
    rejected: null,
    raw: new ReadableStream({
      pull(controller) {
        if (offset >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(offset, offset + 65_536));
        offset += 65_536;
      },
    }),
    setReject(reason) {
      message.rejected = reason;
    },
    forward() {
      throw new Error("forward() is not used by the engine");
    },
    reply() {
      throw new Error("reply() is not used by the engine");
    },
  };
  return message;
}

/** Calls the Worker's exported `email()` handler as the runtime does; returns the message. */
export async function deliverInbound(from, to, raw) {
  const message = inboundMessage(from, to, raw);
  const ctx = createExecutionContext();
  await Engine.prototype.email.call({ env, ctx }, message);
  await waitOnExecutionContext(ctx);
  return message;
}

/**
 * Posts a generic `payload` signed with `secret` (a key of `partner`) and runs its journey to
 * completion with sleeps and retry delays off (`modify` adds instance controls, e.g. step
 * mocks). Returns `{output, eventId}`; `eventId` is the id the event is stored under
 * (`<partner>/<webhook-id>`, as sent for partner `default`).
 */
export async function runGenericAs(partner, secret, payload, { id = unique("msg_"), modify = async () => {} } = {}) {
  const { introspectWorkflowInstance } = await import("cloudflare:test");
  const { expect } = await import("vitest");
  const eventId = partner === "default" ? id : `${partner}/${id}`;
  const instance = await introspectWorkflowInstance(env.JOURNEY, await instanceIdOf("generic", eventId));
  try {
    await instance.modify(async (m) => {
      await m.disableSleeps();
      await m.disableRetryDelays();
      await modify(m);
    });
    const { response } = await postGeneric(JSON.stringify(payload), { id, secret });
    expect(response.status, await response.clone().text()).toBe(202);
    await instance.waitForStatus("complete");
    return { output: await instance.getOutput(), eventId };
  } finally {
    await instance.dispose();
  }
}

/**
 * Posts a generic `payload` as partner "default" (GENERIC_SECRET) and runs its journey to
 * completion with sleeps and retry delays off; returns the journey's output.
 */
export async function runGeneric(payload, options) {
  return (await runGenericAs("default", GENERIC_SECRET, payload, options)).output;
}

/** Today's date (UTC, `YYYY-MM-DD`): the day in the dedupe key of a once-a-day owner alert. */
export function today() {
  return new Date().toISOString().slice(0, 10);
}

/**
 * Runs `fn` with some bindings of `env` changed (the Worker reads its env on every request), then
 * puts back what was there (a binding that was absent is deleted again); returns what `fn` returns.
 */
export async function withBindings(changes, fn) {
  const before = Object.fromEntries(Object.keys(changes).map((k) => [k, env[k]]));
  Object.assign(env, changes);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
  }
}

/**
 * Posts an admin form as the browser does: the session's CSRF token read from `page` (the admin
 * page that carries the form), same origin, redirects not followed. Returns the response.
 */
export async function adminForm(cookie, page, path, fields) {
  const html = await adminPage(page, cookie);
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)[1];
  return SELF.fetch(`https://engine.test${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie, origin: "https://engine.test", "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ csrf, ...fields }),
  });
}

/** The outbox's copy of the email `key` (`{subject, text, html, …}`), or null when it has none. */
export async function queuedEmail(key) {
  const r = await outboxStub().fetch(`https://outbox/email?dedupe_key=${encodeURIComponent(key)}`);
  return r.status === 200 ? r.json() : null;
}

/**
 * One alarm with the client slot open, repeated until `key` left `queued`/`sending`; returns the
 * outbox state. (`runOutbox` would wait for owner alerts that cannot go out while every route is
 * paused.)
 */
export async function oneAlarm(key) {
  await setOutboxState("next_slot_at_ms", 0);
  return eventually(async () => {
    await runDurableObjectAlarm(outboxStub());
    const s = await outboxState();
    const status = item(s, key).status;
    if (["queued", "sending"].includes(status)) throw new Error(`${key} is still ${status}`);
    return s;
  });
}

/**
 * Sets the outbox up for an SMTP case: every queued or waiting item set aside, no route history,
 * no SMTP pause, the main provider paused for a day (so SMTP carries every email).
 */
export async function smtpOnlyOutbox() {
  const { runInDurableObject } = await import("cloudflare:test");
  await outboxState();
  await runInDurableObject(outboxStub(), async (_o, st) => {
    st.storage.sql.exec("UPDATE queue SET status = 'skipped', set_aside_on = 0 WHERE status IN ('queued', 'waiting')");
    st.storage.sql.exec("DELETE FROM route_log");
    st.storage.sql.exec("DELETE FROM state WHERE key LIKE 'smtp_pause_%'");
  });
  await setOutboxState("main_paused_until_ms", Date.now() + 86_400_000);
  await setOutboxState("smtp_paused_until_ms", null);
}

/** The scripted SMTP server's log (tests/e2e/scripted-smtp.mjs: transactions, accepted, subjects per recipient). */
export async function scriptedSmtpLog() {
  return (await fetch(`${env.SCRIPTED_SMTP_API}/_test/log`)).json();
}

/** The DATA transactions the scripted SMTP server saw for `to`, and how many of them it accepted. */
export async function scriptedSmtpCount(to) {
  const log = await scriptedSmtpLog();
  return { transactions: log.transactions[to] ?? 0, accepted: log.accepted[to] ?? 0 };
}

/** Makes the scripted SMTP server answer MAIL FROM with `reply` (null: accept again). */
export async function scriptedSmtpRefuseSender(reply) {
  await fetch(`${env.SCRIPTED_SMTP_API}/_test/mail-from`, { method: "POST", body: JSON.stringify({ reply }) });
}

/** The next 15 July at least two weeks away (Madrid is at UTC+02:00 then): `{year, days}`, days from today. */
export function nextSummerDay() {
  const now = new Date();
  let year = now.getUTCFullYear();
  if (Date.UTC(year, 6, 15) - now.getTime() < 14 * 86_400_000) year += 1;
  const days = Math.round((Date.UTC(year, 6, 15) - Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())) / 86_400_000);
  return { year, days };
}

/**
 * Drives `key`, whose every send fails with an error the outbox retries, to its dead letter: the
 * first turn leaves it `waiting` (backoff ahead) with `provider`'s error matching `error`, the
 * main provider not paused and no owner alert yet; each later turn (backoff ended) is one more
 * attempt, until the ceiling (`attempts`, the runs' OUTBOX_MAX_ATTEMPTS = 6) makes it `dead`.
 * Returns the outbox state then.
 */
export async function failUntilDead(key, { provider, error, attempts = 6 }) {
  const { expect } = await import("vitest");
  const before = Date.now();
  let state = await turn(key);
  const first = item(state, key);
  expect(first).toMatchObject({ status: "waiting", attempts: 1, provider });
  expect(first.last_error).toMatch(error);
  expect(first.not_before_ms).toBeGreaterThan(before);
  expect(state.mainPausedUntilMs ?? 0).toBeLessThan(Date.now());
  expect(item(state, `owner_email_failed:${key}`)).toBeUndefined();
  for (let n = 2; n <= attempts; n++) {
    await endBackoff(key);
    state = await turn(key, n);
  }
  expect(item(state, key)).toMatchObject({ status: "dead", attempts });
  return state;
}

/** The operator API's headers (the runs' OPERATOR_TOKEN, a JSON body). */
export const OPERATOR = { authorization: "Bearer test-operator-token-0123456789abcdef", "content-type": "application/json" };

/** POST /admin/marketing/send as the operator, `campaign` (`{campaign, subject, text, recipients}`) its body: the response. */
export function sendCampaign(campaign) {
  return SELF.fetch("https://engine.test/admin/marketing/send", { method: "POST", headers: OPERATOR, body: JSON.stringify(campaign) });
}

/**
 * Registers an outbound webhook subscriber at the receiver's `/hook/<name>`
 * (tests/e2e/webhook-receiver.mjs, which verifies each signature with the secret the engine gave)
 * for `eventTypes` (empty: every type); `plan` scripts the receiver's answers, `always500` makes it
 * fail every attempt. Returns `{name, id}`.
 */
export async function subscribe(eventTypes, { plan, always500 = false } = {}) {
  const { expect } = await import("vitest");
  const name = unique("sub-").replace(/_/g, "-");
  const url = `${env.WEBHOOK_RECEIVER}/hook/${name}`;
  const r = await SELF.fetch("https://engine.test/admin/webhooks/subscribers", {
    method: "POST",
    headers: OPERATOR,
    body: JSON.stringify({ url, eventTypes, description: `test ${name}` }),
  });
  const body = await r.json();
  expect(r.status, JSON.stringify(body)).toBe(201);
  expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  await fetch(`${env.WEBHOOK_RECEIVER}/__register`, { method: "POST", body: JSON.stringify({ name, secret: body.secret }) });
  if (plan || always500) await receiverPlan(name, plan ?? [], always500);
  return { name, id: body.subscriberId };
}

/** Scripts the receiver's answers to subscriber `name` (see webhook-receiver.mjs). */
export async function receiverPlan(name, plan, always500 = false) {
  await fetch(`${env.WEBHOOK_RECEIVER}/__plan`, { method: "POST", body: JSON.stringify({ name, plan, always500 }) });
}

/**
 * Puts an Email Service `message.bounced` for `recipient` on the events queue (the shape of
 * Cloudflare's email sending events, hard by default); returns the event.
 */
export async function emailBounced(recipient, { eventId = crypto.randomUUID(), type = "hard", messageId } = {}) {
  const event = {
    type: "cf.email.sending.message.bounced",
    source: { type: "email.sending", zoneId: "023e105f4ecef8ad9ca31a8372d0c353", domain: "example.com" },
    payload: {
      eventId,
      messageId: messageId ?? `msg-${eventId}`,
      sender: "bookings@example.com",
      recipient,
      subject: "Your stay is confirmed",
      terminal: true,
      delivery: { status: "bounced", smtpStatusCode: "550", smtpResponse: "550 5.1.1 User unknown" },
      bounce: { type, classification: type === "hard" ? "permanent_failure" : "temporary_failure", reason: "550 5.1.1 User unknown" },
    },
    metadata: { eventSchemaVersion: 1, eventTimestamp: new Date().toISOString() },
  };
  await env.EMAIL_EVENTS.send(event);
  return event;
}

/** Subscriber `subId`'s outbound deliveries, oldest first. */
export function deliveriesOf(subId) {
  return rows(
    "SELECT delivery_id, event_id, status, attempts, budget_from, redrives FROM webhook_deliveries WHERE subscriber_id = ? ORDER BY created_at_ms",
    subId,
  );
}

/** Waits (up to `ms`) until subscriber `subId` has `count` deliveries, every one `status`; returns them. */
export async function deliveriesSettled(subId, count, status, { ms = 40_000 } = {}) {
  const { expect } = await import("vitest");
  return eventually(async () => {
    const ds = await deliveriesOf(subId);
    expect(ds).toHaveLength(count);
    expect(ds.every((d) => d.status === status)).toBe(true);
    return ds;
  }, { ms, every: 200 });
}
