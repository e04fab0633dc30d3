// Marketing email, one-click unsubscribe and provider-reported bounces, inside workerd with the real
// Worker, D1 and outbox Durable Object:
// - the operator API (/admin/…): bearer token, validation, a campaign → claimed D1 rows + outbox
//   items with the RFC 8058 headers; redrive and state forwarded to the outbox;
// - /unsubscribe/<token>: GET only shows a page, the one-click POST suppresses (no redirect, no
//   cookie), bad tokens and bodies are refused;
// - /webhooks/resend: Svix-signed bounces and complaints become suppressions;
// - at send time (the outbox): a suppressed marketing email is skipped while booking mail still
//   goes, marketing never goes ahead of booking mail, one per person per UTC day, and the daily cap
//   (MARKETING_DAILY_CAP = 3 in the test config) holds the rest until the next UTC midnight.
//
// The outbox's state lives for the whole file: tests use unique addresses and campaign ids, and the
// daily-cap test runs last (it holds marketing for the rest of the UTC day).
import { env, SELF, runInDurableObject } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { book, endBackoff, item, outboxState, outboxStub, passClientGap, queuedEmail as outboxCopy, rows, sendThrough, turn, unique, withBindings } from "./helpers.mjs";

const OPERATOR_TOKEN = "test-operator-token-0123456789abcdef";
const UNSUBSCRIBE_KEY = "test-unsubscribe-signing-key-0123456789abcdef";
const RESEND_SECRET = "whsec_dGVzdC1yZXNlbmQtd2ViaG9vay1zZWNyZXQtMDEyMzQ1";
const DAY_MS = 86_400_000;

const enc = new TextEncoder();

function admin(path, { method = "POST", body, token = OPERATOR_TOKEN, authorization } = {}) {
  const headers = { "content-type": "application/json" };
  if (authorization !== undefined) headers.authorization = authorization;
  else if (token !== null) headers.authorization = `Bearer ${token}`;
  return SELF.fetch(`https://engine.test${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

function campaign(recipients, overrides = {}) {
  return {
    campaign: unique("spring-"),
    subject: "Spring offers",
    text: "Hello from Example Trips.\n\nOur spring offers are here.",
    recipients,
    ...overrides,
  };
}

/**
 * Closes the client slot for an hour, so the outbox sends no client email by itself (an idle outbox
 * sends a new email at once); tests open it with passClientGap / sendThrough.
 */
async function closeClientSlot() {
  await outboxState(); // the outbox creates its tables on first use
  await runInDurableObject(outboxStub(), async (_o, st) => {
    st.storage.sql.exec(
      "INSERT INTO state (key, value) VALUES ('next_slot_at_ms', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      Date.now() + 3_600_000,
    );
  });
}

/** POST /admin/marketing/send (with the client slot closed first: nothing is sent implicitly). */
async function send(body, options) {
  await closeClientSlot();
  const r = await admin("/admin/marketing/send", { body, ...options });
  return { status: r.status, json: await r.json() };
}

/** The outbox's copy of the queued email `key` (it must have one). */
async function queuedEmail(key) {
  const email = await outboxCopy(key);
  expect(email, `the outbox has no copy of ${key}`).not.toBeNull();
  return email;
}

/** The List-Unsubscribe URL of a queued marketing email. */
async function unsubscribeUrlOf(key) {
  const email = await queuedEmail(key);
  const header = new Map(email.headers).get("List-Unsubscribe");
  expect(header).toMatch(/^<https:\/\/engine\.test\/unsubscribe\/[A-Za-z0-9_.-]+>$/);
  return header.slice(1, -1);
}

function b64url(bytes) {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** An unsubscribe token as the engine makes them (domain::unsubscribe), for any list and key. */
async function unsubscribeToken(email, list, key = UNSUBSCRIBE_KEY) {
  const payload = b64url(enc.encode(JSON.stringify([email, list])));
  const k = await crypto.subtle.importKey("raw", enc.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", k, enc.encode(`booking-email-engine/unsubscribe/v1\n${payload}`));
  return `${payload}.${b64url(new Uint8Array(mac))}`;
}

function oneClick(url, body = "List-Unsubscribe=One-Click", contentType = "application/x-www-form-urlencoded") {
  return SELF.fetch(url, { method: "POST", headers: { "content-type": contentType }, body, redirect: "manual" });
}

async function suppression(email) {
  return (await rows("SELECT reason, source, detail FROM suppressions WHERE email = ?", email.toLowerCase()))[0];
}

/** Posts a Svix-signed delivery to /webhooks/resend (`prefix` "svix" or "webhook"). */
async function postResend(payload, { id = unique("msg_"), secret = RESEND_SECRET, t = Math.floor(Date.now() / 1000), prefix = "svix", signature } = {}) {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const key = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
  const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(`${id}.${t}.${body}`)));
  const headers = { "content-type": "application/json" };
  headers[`${prefix}-id`] = id;
  headers[`${prefix}-timestamp`] = String(t);
  headers[`${prefix}-signature`] = signature ?? `v1,${btoa(String.fromCharCode(...mac))}`;
  const response = await SELF.fetch("https://engine.test/webhooks/resend", { method: "POST", headers, body });
  return { response, id };
}

function bounce(to, type = "Permanent") {
  return {
    type: "email.bounced",
    created_at: new Date().toISOString(),
    data: {
      email_id: crypto.randomUUID(),
      from: "Example Trips <bookings@example.com>",
      to: [to],
      subject: "Spring offers",
      created_at: new Date().toISOString(),
      bounce: { message: "The recipient's mail server permanently rejected the email.", subType: "General", type },
    },
  };
}

async function bookGuest(options) {
  const d = await book(options);
  return { ...d, key: `booking_confirmation:${d.bookingId}` };
}

const marketingKey = (c, to) => `marketing:${c}:${to.toLowerCase()}`;

describe("operator API", () => {
  it("refuses a missing, malformed or wrong bearer token with 401", async () => {
    const body = campaign([`${unique("auth")}@example.com`]);
    for (const options of [{ token: null }, { token: "wrong" }, { authorization: OPERATOR_TOKEN }, { authorization: "Basic dGVzdA==" }]) {
      const r = await send(body, options);
      expect(r.status).toBe(401);
      expect(r.json.error).toBe("unauthorized");
    }
    expect((await admin("/admin/outbox", { method: "GET", token: "wrong" })).status).toBe(401);
    expect((await admin("/admin/outbox/redrive", { body: { dedupeKey: "a:b" }, token: null })).status).toBe(401);
    // Nothing was claimed.
    expect(await rows("SELECT dedupe_key FROM emails WHERE dedupe_key = ?", marketingKey(body.campaign, body.recipients[0]))).toEqual([]);
  });

  it("answers 503 naming OPERATOR_TOKEN when it is empty (the API is off)", async () => {
    await withBindings({ OPERATOR_TOKEN: "" }, async () => {
      for (const token of [OPERATOR_TOKEN, null]) {
        const r = await send(campaign(["a@example.com"]), { token });
        expect(r.status).toBe(503);
        expect(r.json.error).toBe("unavailable");
        expect(r.json.message).toContain("OPERATOR_TOKEN");
      }
    });
  });

  it("refuses marketing without an unsubscribe key or with a non-https PUBLIC_BASE_URL (503, naming it)", async () => {
    const to = `${unique("nokey")}@example.com`;
    const body = campaign([to]);
    await withBindings({ UNSUBSCRIBE_SIGNING_KEY: "" }, async () => {
      const r = await send(body);
      expect(r.status).toBe(503);
      expect(r.json).toMatchObject({ error: "unavailable" });
      expect(r.json.message).toContain("UNSUBSCRIBE_SIGNING_KEY");
    });
    // Outside development the production guard refuses a plain-http base (marketing is off).
    await withBindings({ PUBLIC_BASE_URL: "http://engine.example.com" }, async () => {
      const r = await send(body);
      expect(r.status).toBe(503);
      expect(r.json).toMatchObject({ error: "unavailable" });
      expect(r.json.message).toContain("PUBLIC_BASE_URL is not https://");
    });
    expect(await rows("SELECT 1 FROM emails WHERE dedupe_key = ?", marketingKey(body.campaign, to))).toEqual([]);
    expect(await rows("SELECT 1 FROM campaigns WHERE campaign_id = ?", body.campaign)).toEqual([]);
  });

  it("validates the request with 400 naming the field", async () => {
    const to = `${unique("v")}@example.com`;
    const cases = [
      [{ ...campaign([to]), campaign: "has space" }, "campaign"],
      [{ ...campaign([to]), campaign: "x".repeat(65) }, "campaign"],
      [{ ...campaign([to]), subject: "" }, "subject"],
      [{ ...campaign([to]), subject: "Hi\r\nBcc: all@example.com" }, "subject"],
      [{ ...campaign([to]), text: "  " }, "text"],
      [{ ...campaign([to]), recipients: [] }, "recipients"],
      [{ ...campaign([to]), recipients: "a@example.com" }, "recipients"],
      [{ ...campaign([to]), recipients: Array.from({ length: 1001 }, (_, i) => `p${i}@example.com`) }, "recipients"],
      [{ ...campaign([to]), recipients: [to, 42] }, "recipients[1]"],
      [{ subject: "s", text: "t", recipients: [to] }, "campaign"],
      // The content lock, before anything is enqueued.
      [{ ...campaign([to]), text: "Manage your stay at https://engine.test/admin/x" }, "text"],
      [{ ...campaign([to]), subject: "Sent by our Workflow" }, "subject"],
    ];
    for (const [body, field] of cases) {
      const r = await send(body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.json).toMatchObject({ error: "invalid_payload", field });
      expect(r.json.message).toContain(field.replace(/\[\d+\]$/, ""));
    }
    const notJson = await admin("/admin/marketing/send", { body: "{nope" });
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).message).toMatch(/not valid JSON/);
    expect(await rows("SELECT 1 FROM emails WHERE to_addr = ?", to)).toEqual([]);
  });

  it("a campaign claims one marketing email per recipient in D1 and queues it with the RFC 8058 headers", async () => {
    const to = `${unique("m")}@example.com`;
    const suppressed = `${unique("complained")}@example.com`;
    await env.DB.prepare(
      "INSERT INTO suppressions (email, reason, source, created_at_ms, updated_at_ms) VALUES (?, 'complaint', 'operator', 0, 0)",
    )
      .bind(suppressed)
      .run();
    const body = campaign([to, to.toUpperCase().replace("@EXAMPLE.COM", "@example.com"), "not an address", suppressed]);
    const r = await send(body);
    expect(r.status).toBe(202);
    expect(r.json).toEqual({
      campaign: body.campaign,
      queued: 1,
      duplicates: 1,
      skipped: [{ email: suppressed, reason: "suppressed: complaint" }],
      rejected: [{ email: "not an address", message: "is not an email address" }],
    });
    const key = marketingKey(body.campaign, to);
    // Claimed in D1 (it stays so until the outbox records its outcome) and held by the outbox.
    expect(await rows("SELECT kind, audience, booking_id, to_addr, subject, rank, status FROM emails WHERE dedupe_key = ?", key)).toEqual([
      { kind: "marketing", audience: "client", booking_id: null, to_addr: to, subject: "Spring offers", rank: 3, status: "claimed" },
    ]);
    expect(await rows("SELECT 1 FROM emails WHERE to_addr = ?", suppressed)).toEqual([]);
    expect(await rows("SELECT subject, body_text FROM campaigns WHERE campaign_id = ?", body.campaign)).toEqual([
      { subject: "Spring offers", body_text: body.text },
    ]);

    const email = await queuedEmail(key);
    expect(email).toMatchObject({ kind: "marketing", audience: "client", rank: "marketing", to, subject: "Spring offers" });
    const token = await unsubscribeToken(to, "marketing");
    const url = `https://engine.test/unsubscribe/${token}`;
    expect(email.headers).toEqual([
      ["List-Unsubscribe", `<${url}>`],
      ["List-Unsubscribe-Post", "List-Unsubscribe=One-Click"],
    ]);
    expect(email.text).toContain(url);
    expect(email.html).toContain(`href="${url}"`);
    expect(item(await outboxState(), key)).toMatchObject({ status: "queued", rank: 3, audience: "client" });

    // Submitting the same campaign again reaches nobody twice.
    const again = await send(body);
    expect(again.status).toBe(202);
    expect(again.json).toMatchObject({ queued: 0, duplicates: 2 });
    // The same id with other content is refused: a campaign id names one email.
    const changed = await send({ ...body, subject: "Other offers" });
    expect(changed.status).toBe(400);
    expect(changed.json).toMatchObject({ field: "campaign" });
  });

  it("checks the suppression list for every recipient of a large campaign (several D1 look-ups)", async () => {
    const prefix = unique("many");
    const recipients = Array.from({ length: 200 }, (_, i) => `${prefix}-${i}@example.com`);
    await env.DB.batch(
      recipients.map((to, i) =>
        env.DB.prepare(
          "INSERT INTO suppressions (email, reason, source, created_at_ms, updated_at_ms) VALUES (?, ?, 'operator', 0, 0)",
        ).bind(to, i % 2 ? "hard_bounce" : "marketing_unsubscribed"),
      ),
    );
    const r = await send(campaign(recipients));
    expect(r.status).toBe(202);
    expect(r.json).toMatchObject({ queued: 0, duplicates: 0, rejected: [] });
    expect(r.json.skipped).toHaveLength(200);
    expect(r.json.skipped[199]).toEqual({ email: recipients[199], reason: "suppressed: hard_bounce" });
    expect(r.json.skipped[100]).toEqual({ email: recipients[100], reason: "suppressed: marketing_unsubscribed" });
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE to_addr LIKE ?", `${prefix}-%`)).toEqual([{ n: 0 }]);
  });

  it("forwards GET /admin/outbox and POST /admin/outbox/redrive to the outbox", async () => {
    const state = await admin("/admin/outbox", { method: "GET" });
    expect(state.status).toBe(200);
    const json = await state.json();
    expect(Array.isArray(json.items)).toBe(true);
    expect(json).toHaveProperty("counts");
    const missing = await admin("/admin/outbox/redrive", { body: { dedupeKey: `booking_confirmation:${unique("nope")}` } });
    expect(missing.status).toBe(404);
    expect((await missing.json()).error).toBe("not_found");
    const bad = await admin("/admin/outbox/redrive", { body: { key: "x" } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: "invalid_payload", field: "dedupeKey" });
    expect((await admin("/admin/outbox", { method: "PUT" })).status).toBe(405);
  });
});

describe("one-click unsubscribe", () => {
  it("GET shows a confirmation page and changes nothing; the one-click POST suppresses marketing, without redirect or cookie", async () => {
    const to = `${unique("u")}@example.com`;
    const c = campaign([to]);
    expect((await send(c)).status).toBe(202);
    const url = await unsubscribeUrlOf(marketingKey(c.campaign, to));

    const page = await SELF.fetch(url, { redirect: "manual" });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(page.headers.get("set-cookie")).toBeNull();
    expect(page.headers.get("cache-control")).toBe("no-store");
    // Nothing on the page runs or loads from elsewhere, its form posts only to the engine, and no
    // other site may frame it.
    const csp = /default-src 'none'.*form-action 'self'.*frame-ancestors 'none'/;
    expect(page.headers.get("content-security-policy")).toMatch(csp);
    const html = await page.text();
    expect(html).toContain(to);
    // A relative action: the page never builds a URL from the request's Host header.
    expect(html).toContain(`<form method="post" action="${new URL(url).pathname}"`);
    const forged = await SELF.fetch(url.replace("https://engine.test", "https://evil.example"));
    expect(await forged.text()).not.toContain("evil.example");
    // HEAD is a live link (link checkers); other methods are 405 with Allow.
    expect((await SELF.fetch(url, { method: "HEAD" })).status).toBe(200);
    const put = await SELF.fetch(url, { method: "PUT" });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD, POST");
    expect(html).toContain('<input type="hidden" name="List-Unsubscribe" value="One-Click">');
    expect(html).toContain("Emails about your bookings");
    // A second GET (a scanner) still changes nothing.
    await SELF.fetch(url);
    expect(await suppression(to)).toBeUndefined();

    for (let i = 0; i < 2; i++) {
      const r = await oneClick(url);
      expect(r.status).toBe(200);
      expect(r.headers.get("location")).toBeNull();
      expect(r.headers.get("set-cookie")).toBeNull();
      expect(r.headers.get("content-security-policy")).toMatch(csp);
      const done = await r.text();
      expect(done).toContain("You are unsubscribed");
      expect(done).toContain("Emails about your bookings will still reach you.");
    }
    expect(await suppression(to)).toEqual({ reason: "marketing_unsubscribed", source: "unsubscribe_link", detail: "one-click POST" });
    expect(await rows("SELECT COUNT(*) AS n FROM suppressions WHERE email = ?", to)).toEqual([{ n: 1 }]);

    // The next campaign skips the address at once.
    const next = await send(campaign([to]));
    expect(next.json).toMatchObject({ queued: 0, skipped: [{ email: to, reason: "suppressed: marketing_unsubscribed" }] });
  });

  it("accepts the multipart one-click body too", async () => {
    const to = `${unique("mp")}@example.com`;
    const url = `https://engine.test/unsubscribe/${await unsubscribeToken(to, "marketing")}`;
    const form = new FormData();
    form.append("List-Unsubscribe", "One-Click");
    const r = await SELF.fetch(url, { method: "POST", body: form, redirect: "manual" });
    expect(r.status).toBe(200);
    expect((await suppression(to)).reason).toBe("marketing_unsubscribed");
  });

  it("refuses a POST without the one-click body, and bad or foreign tokens, with 400 and changes nothing", async () => {
    const to = `${unique("bad")}@example.com`;
    const token = await unsubscribeToken(to, "marketing");
    const url = `https://engine.test/unsubscribe/${token}`;
    for (const body of ["", "List-Unsubscribe=Later", "unsubscribe=yes"]) {
      const r = await oneClick(url, body);
      expect(r.status).toBe(400);
      expect(r.headers.get("location")).toBeNull();
      expect(await r.text()).toContain("List-Unsubscribe=One-Click");
    }
    const tampered = `https://engine.test/unsubscribe/${token.slice(0, -2)}${token.endsWith("AA") ? "BB" : "AA"}`;
    const otherKey = `https://engine.test/unsubscribe/${await unsubscribeToken(to, "marketing", "another-signing-key-0123456789abcdef0123")}`;
    const otherList = `https://engine.test/unsubscribe/${await unsubscribeToken(to, "newsletter")}`;
    for (const u of [tampered, otherKey, otherList, "https://engine.test/unsubscribe/garbage", "https://engine.test/unsubscribe/"]) {
      for (const r of [await SELF.fetch(u, { redirect: "manual" }), await oneClick(u)]) {
        expect(r.status, u).toBe(400);
        expect(r.headers.get("content-type")).toMatch(/text\/html/);
        expect(await r.text()).toContain("This unsubscribe link is not valid");
      }
    }
    expect(await suppression(to)).toBeUndefined();
  });

  it("never downgrades a stronger suppression", async () => {
    const to = `${unique("strong")}@example.com`;
    await env.DB.prepare(
      "INSERT INTO suppressions (email, reason, source, created_at_ms, updated_at_ms) VALUES (?, 'hard_bounce', 'resend_webhook', 0, 0)",
    )
      .bind(to)
      .run();
    const r = await oneClick(`https://engine.test/unsubscribe/${await unsubscribeToken(to, "marketing")}`);
    expect(r.status).toBe(200);
    expect((await suppression(to)).reason).toBe("hard_bounce");
  });
});

describe("Resend webhooks", () => {
  it("a permanent bounce records a hard bounce; the same delivery again is a duplicate", async () => {
    const to = `${unique("hb")}@example.com`;
    const payload = bounce(to);
    const { response, id } = await postResend(payload);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: "recorded",
      eventId: id,
      reason: "hard_bounce",
      suppressed: [to],
      onRecord: [{ email: to, reason: "hard_bounce" }],
      notAddresses: [],
    });
    expect(await suppression(to)).toEqual({
      reason: "hard_bounce",
      source: "resend_webhook",
      detail: "Permanent/General: The recipient's mail server permanently rejected the email.",
    });
    expect(await rows("SELECT source, event_name, status FROM raw_events WHERE event_id = ?", id)).toEqual([
      { source: "resend", event_name: "email.bounced", status: "received" },
    ]);
    const again = await postResend(payload, { id });
    expect(again.response.status).toBe(200);
    expect(await again.response.json()).toEqual({ status: "duplicate", eventId: id });
    // The same id with another body: the first delivery stands, nothing is acted on.
    const other = `${unique("other")}@example.com`;
    const reused = await postResend({ type: "email.complained", data: { to: [other] } }, { id });
    expect(await reused.response.json()).toMatchObject({ status: "duplicate", eventId: id, message: expect.stringMatching(/different body/) });
    expect(await suppression(other)).toBeUndefined();
  });

  it("a bounce listing one odd entry still suppresses the usable address and reports the other", async () => {
    const to = `${unique("partial")}@example.com`;
    const payload = bounce(to);
    payload.data.to = [to, "not an address"];
    const { response } = await postResend(payload);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ status: "recorded", suppressed: [to] });
    expect(body.notAddresses).toHaveLength(1);
    expect(body.notAddresses[0]).toMatch(/^data\.to\[1\]: /);
    expect((await suppression(to)).reason).toBe("hard_bounce");
    // A complaint on record is not replaced by a later hard bounce, and the reply says so.
    const complainer = `${unique("c")}@example.com`;
    await postResend({ type: "email.complained", data: { to: [complainer] } });
    const later = await postResend(bounce(complainer));
    expect((await later.response.json()).onRecord).toEqual([{ email: complainer, reason: "complaint" }]);
  });

  it("a complaint (webhook-* header names) records a complaint; a soft bounce and other events record nothing", async () => {
    const complainer = `${unique("spam")}@example.com`;
    const { response } = await postResend(
      { type: "email.complained", created_at: new Date().toISOString(), data: { email_id: "e1", from: "bookings@example.com", to: [`Someone <${complainer}>`], subject: "s" } },
      { prefix: "webhook" },
    );
    expect(response.status).toBe(200);
    expect((await suppression(complainer)).reason).toBe("complaint");

    const soft = `${unique("soft")}@example.com`;
    const s = await postResend(bounce(soft, "Transient"));
    expect(s.response.status).toBe(200);
    expect(await s.response.json()).toMatchObject({ status: "ignored", eventId: s.id });
    const delivered = await postResend({ type: "email.delivered", data: { to: [soft] } });
    expect(await delivered.response.json()).toMatchObject({ status: "ignored" });
    expect(await suppression(soft)).toBeUndefined();
    expect(await rows("SELECT status FROM raw_events WHERE event_id = ?", s.id)).toEqual([{ status: "ignored" }]);
  });

  it("a bad, missing or stale signature is 401 and nothing is stored", async () => {
    const to = `${unique("forged")}@example.com`;
    const attempts = [
      await postResend(bounce(to), { secret: "whsec_b3RoZXItc2VjcmV0LTAxMjM0NTY3ODk=" }),
      await postResend(bounce(to), { signature: "v1,AAAA" }),
      await postResend(bounce(to), { t: Math.floor(Date.now() / 1000) - 3600 }),
    ];
    const unsigned = await SELF.fetch("https://engine.test/webhooks/resend", { method: "POST", body: JSON.stringify(bounce(to)) });
    for (const r of [...attempts.map((a) => a.response), unsigned]) {
      expect(r.status).toBe(401);
      expect((await r.json()).error).toBe("unauthorized");
    }
    expect(await suppression(to)).toBeUndefined();
    for (const a of attempts) {
      expect(await rows("SELECT 1 FROM raw_events WHERE event_id = ?", a.id)).toEqual([]);
    }
  });

  it("a signed but malformed report is 400 naming the problem, stored as rejected", async () => {
    const bad = await postResend("{not json");
    expect(bad.response.status).toBe(400);
    expect((await bad.response.json()).message).toMatch(/not valid JSON/);
    const noTo = bounce("x@example.com");
    delete noTo.data.to;
    const missing = await postResend(noTo);
    expect(missing.response.status).toBe(400);
    expect(await missing.response.json()).toMatchObject({ error: "invalid_payload", field: "data.to" });
    const rejected = await rows("SELECT status, error, headers_json FROM raw_events WHERE source = 'resend' AND status = 'rejected' ORDER BY id");
    expect(rejected.length).toBeGreaterThanOrEqual(2);
    expect(rejected.at(-1).error).toContain("data.to");
    // The delivery's id is kept, to match it to Resend's log and replay it.
    expect(rejected.at(-1).error).toContain(`(svix-id ${missing.id})`);
    expect(JSON.parse(rejected.at(-1).headers_json)["svix-id"]).toBe(missing.id);
  });
});

describe("marketing at send time (the outbox)", () => {
  it("skips a marketing email whose address unsubscribed after it was queued, while booking mail to that address still goes", async () => {
    const to = `${unique("late")}@example.com`;
    const c = campaign([to]);
    expect((await send(c)).json.queued).toBe(1);
    const key = marketingKey(c.campaign, to);
    expect((await oneClick(await unsubscribeUrlOf(key))).status).toBe(200);
    const d = await bookGuest({ email: to });
    let state = await sendThrough(d.key);
    expect(item(state, d.key)).toMatchObject({ status: "sent" });
    state = await sendThrough(key);
    expect(item(state, key)).toMatchObject({ status: "skipped", last_error: "suppressed: marketing_unsubscribed" });
    expect(item(state, key).sent_at_ms).toBeNull();
    expect(await rows("SELECT status, last_error FROM emails WHERE dedupe_key = ?", key)).toEqual([
      { status: "skipped", last_error: "suppressed: marketing_unsubscribed" },
    ]);
  });

  it("a hard bounce reported by Resend stops booking mail too", async () => {
    const to = `${unique("dead")}@example.com`;
    expect((await postResend(bounce(to))).response.status).toBe(200);
    const d = await bookGuest({ email: to });
    const state = await sendThrough(d.key);
    expect(item(state, d.key)).toMatchObject({ status: "skipped", last_error: "suppressed: hard_bounce" });
  });

  it("marketing never goes ahead of booking mail, queued or backing off", async () => {
    const to = `${unique("patient")}@example.com`;
    const c = campaign([to]);
    expect((await send(c)).json.queued).toBe(1);
    const key = marketingKey(c.campaign, to);
    // Newer booking mail whose first send fails: it backs off (waiting) and marketing must wait too.
    const d = await bookGuest({ email: `${unique("g")}+fail-1@example.com` });
    let state;
    for (let i = 0; i < 20; i++) {
      state = await passClientGap();
      if (item(state, d.key).status !== "queued") break;
      expect(item(state, key).status).toBe("queued");
    }
    expect(item(state, d.key)).toMatchObject({ status: "waiting", attempts: 1 });
    state = await passClientGap();
    state = await passClientGap();
    expect(item(state, key)).toMatchObject({ status: "queued" });
    expect(item(state, key).sent_at_ms).toBeNull();
    await endBackoff(d.key);
    state = await sendThrough(d.key);
    expect(item(state, d.key).status).toBe("sent");
    expect(item(state, key).status).toBe("queued");
    state = await sendThrough(key);
    expect(item(state, key)).toMatchObject({ status: "sent", rank: 3 });
    expect(item(state, key).sent_at_ms).toBeGreaterThan(item(state, d.key).sent_at_ms);
    expect((await rows("SELECT status FROM emails WHERE dedupe_key = ?", key))[0].status).toBe("sent");
    // A sent email is no dead letter: the operator's redrive is refused with the outbox's 409.
    const redrive = await admin("/admin/outbox/redrive", { body: { dedupeKey: key } });
    expect(redrive.status).toBe(409);
    expect(await redrive.json()).toMatchObject({ error: "conflict", status: "sent" });
  });

  it("one marketing email per person per UTC day: the second campaign to the same address waits for the next UTC day", async () => {
    const to = `${unique("once")}@example.com`;
    const first = campaign([to]);
    const second = campaign([to]);
    expect((await send(first)).json.queued).toBe(1);
    expect((await send(second)).json.queued).toBe(1);
    let state = await sendThrough(marketingKey(first.campaign, to));
    expect(item(state, marketingKey(first.campaign, to)).status).toBe("sent");
    state = await turn(marketingKey(second.campaign, to));
    const waiting = item(state, marketingKey(second.campaign, to));
    expect(waiting).toMatchObject({ status: "waiting", attempts: 0 });
    expect(waiting.last_error).toMatch(/one marketing email per person per UTC day/);
    expect(waiting.not_before_ms).toBe((Math.floor(Date.now() / DAY_MS) + 1) * DAY_MS);
  });

  it("the daily cap holds further marketing until the next UTC midnight; booking mail still goes", async () => {
    // MARKETING_DAILY_CAP is 3 in the test config. Fill today's cap with fresh recipients.
    const dayStart = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const sentToday = (s) => s.items.filter((i) => i.rank === 3 && i.sent_at_ms !== null && i.sent_at_ms >= dayStart).length;
    let state = await outboxState();
    while (sentToday(state) < 3) {
      const to = `${unique("fill")}@example.com`;
      const c = campaign([to]);
      expect((await send(c)).json.queued).toBe(1);
      state = await sendThrough(marketingKey(c.campaign, to));
      expect(item(state, marketingKey(c.campaign, to)).status).toBe("sent");
    }
    expect(sentToday(state)).toBe(3);

    const to = `${unique("capped")}@example.com`;
    const c = campaign([to]);
    expect((await send(c)).json.queued).toBe(1);
    const key = marketingKey(c.campaign, to);
    for (let i = 0; i < 3; i++) state = await passClientGap();
    expect(item(state, key)).toMatchObject({ status: "queued" });
    expect(item(state, key).sent_at_ms).toBeNull();
    expect(state.marketingHeldUntilMs).toBe(dayStart + DAY_MS);
    expect(sentToday(state)).toBe(3);

    // Booking mail is not held by the marketing cap.
    const d = await bookGuest({ email: `${unique("guest")}@example.com` });
    state = await sendThrough(d.key);
    expect(item(state, d.key).status).toBe("sent");
    expect(item(state, key).status).toBe("queued");
  });
});
