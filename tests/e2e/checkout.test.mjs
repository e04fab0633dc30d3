// Unfinished checkouts and card testing, inside workerd: the 20-minute follow-up for the newest
// attempt only, no email once booked, holds with signed single-use owner actions.
import { env, introspectWorkflowInstance, SELF } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { dateInDays, formNonce, instanceIdFor, outboxStub, postLiteapi, rows, submitActionForm, unique } from "./helpers.mjs";
import { postStripe } from "./compensation-helpers.mjs";
import { stripeEvent } from "./payloads.mjs";

/** A liteAPI booking.prebook with a guest (request.holder) and a transaction id. */
function prebook({ email, first = "Testa", last = unique("Guest"), hotelId = "lp_fake_1001", checkin = dateInDays(20), reference = unique("trip_") } = {}) {
  const eventId = unique("evt_pb_");
  const prebookId = unique("PB_");
  return {
    eventId,
    prebookId,
    reference,
    body: JSON.stringify({
      event_id: eventId,
      event_name: "booking.prebook",
      sandbox: false,
      request: JSON.stringify({ offerId: "OFFER", usePaymentSdk: true, clientReference: reference, holder: { firstName: first, lastName: last, email } }),
      response: JSON.stringify({ data: { prebookId, hotelId, checkin, checkout: dateInDays(23), currency: "EUR", price: 540, transactionId: unique("tr_") } }),
    }),
  };
}

/**
 * Starts a checkout journey with sleeps disabled. `holdMs` delays its decision (the decision step
 * fails twice first: the engine retries after 2 s and 4 s) so later attempts can land before it,
 * as they would during the real 20-minute wait.
 */
async function startCheckout(p, { hold = false } = {}) {
  const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(p.eventId));
  await instance.modify(async (m) => {
    await m.disableSleeps();
    if (hold) await m.mockStepError({ name: `decide checkout ${p.prebookId}` }, new Error("held back by the test"), 2);
  });
  const r = await postLiteapi(p.body);
  expect(r.status, await r.clone().text()).toBe(202);
  return instance;
}

async function finish(instance) {
  try {
    await instance.waitForStatus("complete");
    return await instance.getOutput();
  } finally {
    await instance.dispose();
  }
}

async function queuedEmail(key) {
  const r = await outboxStub().fetch(`https://outbox/email?dedupe_key=${encodeURIComponent(key)}`);
  return r.status === 200 ? r.json() : null;
}

describe("unfinished checkouts", () => {
  it("three attempts in a row get one follow-up, for the newest only, 20 minutes after it", async () => {
    const email = `${unique("guest")}@example.com`;
    const last = unique("Retry");
    const attempts = [prebook({ email, last }), prebook({ email, last }), prebook({ email, last })];
    const instances = [];
    for (const [i, p] of attempts.entries()) instances.push(await startCheckout(p, { hold: i < 2 }));
    const outputs = [];
    for (const instance of instances) outputs.push(await finish(instance));

    expect(outputs[0].emails).toEqual([]);
    expect(outputs[1].emails).toEqual([]);
    expect(outputs[2].emails).toEqual([[`checkout_not_completed:${attempts[2].prebookId}`, "enqueued"]]);
    const decided = await rows(
      "SELECT prebook_id, outcome, decided_at_ms - attempted_at_ms AS waited_ms FROM checkout_attempts WHERE email = ? ORDER BY attempted_at_ms",
      email,
    );
    expect(decided.map((d) => d.outcome)).toEqual(["superseded", "superseded", "follow_up"]);
    for (const d of decided) expect(d.waited_ms).toBe(20 * 60_000);

    const mail = await queuedEmail(`checkout_not_completed:${attempts[2].prebookId}`);
    expect(mail.to).toBe(email);
    expect(mail.text).toMatch(/nothing was charged/i);
    expect(mail.text).not.toMatch(/declined/i);
    expect(mail.text).toContain("https://book.example.com");
    expect(mail.html).not.toContain("/actions/");
  });

  it("a checkout followed by its booking sends nothing", async () => {
    const email = `${unique("guest")}@example.com`;
    const p = prebook({ email });
    const instance = await startCheckout(p, { hold: true });
    const booking = JSON.parse(JSON.stringify({
      event_id: unique("evt_"),
      event_name: "booking.book",
      sandbox: false,
      request: JSON.stringify({ prebookId: p.prebookId }),
      response: JSON.stringify({ data: {
        bookingId: unique("BK_"), prebookId: p.prebookId, status: "CONFIRMED", checkin: dateInDays(20), checkout: dateInDays(23),
        hotel: { hotelId: "lp_fake_1001", name: "Example Harbour Hotel" },
        holder: { firstName: "Testa", lastName: "Guestington", email },
      } }),
    }));
    expect((await postLiteapi(JSON.stringify(booking))).status).toBe(202);
    const out = await finish(instance);
    expect(out.emails).toEqual([]);
    expect(await rows("SELECT outcome FROM checkout_attempts WHERE prebook_id = ?", p.prebookId)).toEqual([{ outcome: "booked" }]);
  });
});

describe("card testing", () => {
  async function cardTestingHold() {
    const name = { first: "Carla", last: unique("Tester") };
    const attempts = [0, 1, 2].map(() => prebook({ ...name, email: `${unique("ct")}@example.com` }));
    const instances = [];
    for (const [i, p] of attempts.entries()) instances.push(await startCheckout(p, { hold: i < 2 }));
    const outputs = [];
    for (const instance of instances) outputs.push(await finish(instance));
    return { attempts, outputs };
  }

  it("one name with three emails on one day: no customer email, one owner alert with working links", async () => {
    const { attempts, outputs } = await cardTestingHold();
    const alerts = outputs.flatMap((o) => o.emails).filter(([k]) => k.startsWith("owner_checkout_hold:"));
    expect(new Set(alerts.map(([k]) => k)).size).toBe(1);
    expect(outputs.flatMap((o) => o.emails).filter(([k]) => !k.startsWith("owner_"))).toEqual([]);
    const holdId = alerts[0][0].split(":")[1];
    const hold = await rows("SELECT status, reason FROM holds WHERE hold_id = ?", holdId);
    expect(hold).toEqual([{ status: "held", reason: expect.stringContaining("3 different email addresses") }]);
    const alert = await queuedEmail(alerts[0][0]);
    expect(alert.to).toBe("owner@example.com");
    const links = [...alert.html.matchAll(/https:\/\/engine\.test\/actions\/[A-Za-z0-9_.-]+/g)].map((m) => m[0]);
    expect(new Set(links).size).toBe(3);
    for (const p of attempts) {
      expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE to_addr = (SELECT email FROM checkout_attempts WHERE prebook_id = ?)", p.prebookId)).toEqual([{ n: 0 }]);
    }
  });

  it("GET shows a confirmation and changes nothing; POST sends exactly one email; repeated and concurrent POSTs send none more", async () => {
    const { outputs } = await cardTestingHold();
    const key = outputs.flatMap((o) => o.emails).find(([k]) => k.startsWith("owner_checkout_hold:"))[0];
    const holdId = key.split(":")[1];
    const alert = await queuedEmail(key);
    const links = [...new Set([...alert.html.matchAll(/https:\/\/engine\.test\/actions\/[A-Za-z0-9_.-]+/g)].map((m) => m[0]))];
    const funds = links[0];

    for (let i = 0; i < 2; i++) {
      const get = await SELF.fetch(funds);
      expect(get.status).toBe(200);
      const page = await get.text();
      expect(page).toMatch(/<form[^>]+method="post"/i);
    }
    expect(await rows("SELECT status FROM holds WHERE hold_id = ?", holdId)).toEqual([{ status: "held" }]);
    expect(await rows("SELECT COUNT(*) AS n FROM owner_actions WHERE hold_id = ?", holdId)).toEqual([{ n: 0 }]);

    const [a, b] = await Promise.all([submitActionForm(funds), submitActionForm(funds)]);
    expect([a.status, b.status].sort()).toEqual([200, 410]);
    const again = await submitActionForm(funds);
    expect(again.status).toBe(410);
    const other = await submitActionForm(links[1]);
    expect(other.status).toBe(409);

    const [hold] = await rows("SELECT status, action, prebook_id FROM holds WHERE hold_id = ?", holdId);
    expect(hold).toMatchObject({ status: "acted", action: "send_insufficient_funds" });
    const sent = await rows("SELECT dedupe_key, audience, to_addr FROM emails WHERE dedupe_key LIKE 'checkout_declined%' AND dedupe_key LIKE ?", `%${hold.prebook_id}`);
    expect(sent).toHaveLength(1);
    expect(sent[0].audience).toBe("client");
    const mail = await queuedEmail(sent[0].dedupe_key);
    expect(mail.text).toMatch(/insufficient funds|available (balance|credit)/i);
    expect(mail.html).not.toContain("/actions/");
  });

  it("links act only from their own page: a bare, cross-site, foreign-origin or wrong-nonce POST changes nothing and shows the page again; the page's form acts once; its nonce replayed does nothing", async () => {
    const { outputs } = await cardTestingHold();
    const key = outputs.flatMap((o) => o.emails).find(([k]) => k.startsWith("owner_checkout_hold:"))[0];
    const holdId = key.split(":")[1];
    const alert = await queuedEmail(key);
    const [funds, security] = [...new Set([...alert.html.matchAll(/https:\/\/engine\.test\/actions\/[A-Za-z0-9_.-]+/g)].map((m) => m[0]))];
    const page = await SELF.fetch(funds);
    expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'.*form-action 'self'.*frame-ancestors 'none'/);
    expect(page.headers.get("referrer-policy")).toBe("same-origin");
    const nonce = formNonce(await page.text());
    expect(nonce).toMatch(/^\d+\.[A-Za-z0-9_-]+$/);
    const otherNonce = formNonce(await (await SELF.fetch(security)).text());

    const refused = [
      // A link scanner: no page visited, no Origin, no nonce.
      () => SELF.fetch(funds, { method: "POST" }),
      // The right nonce, posted from another site.
      () => submitActionForm(funds, { nonce, headers: { "sec-fetch-site": "cross-site", origin: "https://evil.example" } }),
      () => submitActionForm(funds, { nonce, headers: { origin: "https://evil.example" } }),
      () => submitActionForm(funds, { nonce, headers: { origin: "null" } }),
      () => submitActionForm(funds, { nonce, headers: { "sec-fetch-site": "same-site" } }),
      // The nonce of another link's page, a made-up one, an expired one.
      () => submitActionForm(funds, { nonce: otherNonce }),
      () => submitActionForm(funds, { nonce: "1700000000.AAAA" }),
      () => submitActionForm(funds, { nonce: `${Math.floor(Date.now() / 1000) - 3600}.${nonce.split(".")[1]}` }),
    ];
    for (const post of refused) {
      const r = await post();
      expect(r.status).toBe(403);
      const html = await r.text();
      expect(html).toContain("Nothing was done.");
      expect(formNonce(html)).not.toBeNull();
    }
    expect(await rows("SELECT status FROM holds WHERE hold_id = ?", holdId)).toEqual([{ status: "held" }]);
    expect(await rows("SELECT COUNT(*) AS n FROM owner_actions WHERE hold_id = ?", holdId)).toEqual([{ n: 0 }]);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE substr(dedupe_key, 1, 17) = 'checkout_declined' AND dedupe_key LIKE ?", `%${holdId}%`)).toEqual([{ n: 0 }]);

    // The page's own form acts, once.
    const acted = await submitActionForm(funds, { nonce });
    expect(acted.status).toBe(200);
    expect(await rows("SELECT status, action FROM holds WHERE hold_id = ?", holdId)).toEqual([{ status: "acted", action: "send_insufficient_funds" }]);
    // The same nonce again: the link is spent.
    const replayed = await submitActionForm(funds, { nonce });
    expect(replayed.status).toBe(410);
    expect(await rows("SELECT COUNT(*) AS n FROM owner_actions WHERE hold_id = ?", holdId)).toEqual([{ n: 1 }]);
  });

  it("a tampered, foreign or expired link gets a refusal page and nothing happens", async () => {
    const enc = new TextEncoder();
    const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    async function signed(holdId, action, expiresAtS, key = "test-action-signing-key-0123456789abcdef") {
      const payload = `v1.${holdId}.${action}.${expiresAtS}`;
      const k = await crypto.subtle.importKey("raw", enc.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
      const mac = new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(`owner-action\n${payload}`)));
      return `${b64url(enc.encode(payload))}.${b64url(mac)}`;
    }
    const { outputs } = await cardTestingHold();
    const key = outputs.flatMap((o) => o.emails).find(([k]) => k.startsWith("owner_checkout_hold:"))[0];
    const holdId = key.split(":")[1];
    const alert = await queuedEmail(key);
    const link = alert.html.match(/https:\/\/engine\.test\/actions\/[A-Za-z0-9_.-]+/)[0];
    const token = link.split("/actions/")[1];
    const flipped = token.slice(0, -2) + (token.at(-2) === "A" ? "B" : "A") + token.at(-1);
    const now = Math.floor(Date.now() / 1000);
    const expired = await signed(holdId, "send_insufficient_funds", now - 1);
    const foreign = await signed(holdId, "send_insufficient_funds", now + 3600, "another-engine-key-0123456789abcdef");
    const unknownHold = await signed("hold-does-not-exist", "dismiss", now + 3600);
    // The test's own signing matches the engine's: a fresh token for this hold is accepted by GET.
    expect((await SELF.fetch(`https://engine.test/actions/${await signed(holdId, "dismiss", now + 3600)}`)).status).toBe(200);
    for (const bad of [
      `https://engine.test/actions/${flipped}`,
      "https://engine.test/actions/garbage",
      "https://engine.test/actions/v1.x.y",
      `https://engine.test/actions/${expired}`,
      `https://engine.test/actions/${foreign}`,
      `https://engine.test/actions/${unknownHold}`,
    ]) {
      for (const method of ["GET", "POST"]) {
        const r = await SELF.fetch(bad, { method });
        expect(r.status, `${method} ${bad}`).toBeGreaterThanOrEqual(400);
        expect(await r.text()).toMatch(/not valid|expired|Unknown/i);
      }
    }
    expect(await rows("SELECT status FROM holds WHERE hold_id = ?", holdId)).toEqual([{ status: "held" }]);
    expect(await rows("SELECT COUNT(*) AS n FROM owner_actions WHERE hold_id = ?", holdId)).toEqual([{ n: 0 }]);
  });
});

describe("Stripe", () => {
  async function runStripe(event) {
    const instance = await introspectWorkflowInstance(env.JOURNEY, `e-stripe-x-${event.id}`);
    try {
      const r = await postStripe(event);
      expect(r.status, await r.clone().text()).toBe(202);
      await instance.waitForStatus("complete");
      return await instance.getOutput();
    } finally {
      await instance.dispose();
    }
  }

  it("a decline is recorded against the attempt for the owner; the customer email still claims no decline", async () => {
    const email = `${unique("guest")}@example.com`;
    const p = prebook({ email });
    const instance = await startCheckout(p, { hold: true });
    const failed = stripeEvent("payment_intent.payment_failed", { id: unique("pi_"), object: "payment_intent", metadata: { trip_id: p.reference }, last_payment_error: { type: "card_error", code: "card_declined", decline_code: "insufficient_funds" } });
    expect((await runStripe(failed)).skipped).toEqual([]);
    const out = await finish(instance);
    expect(out.emails).toEqual([[`checkout_not_completed:${p.prebookId}`, "enqueued"]]);
    expect(await rows("SELECT payment_status, decline_code, outcome FROM checkout_attempts WHERE prebook_id = ?", p.prebookId)).toEqual([
      { payment_status: "failed", decline_code: "insufficient_funds", outcome: "follow_up" },
    ]);
    const mail = await queuedEmail(`checkout_not_completed:${p.prebookId}`);
    expect(mail.text).not.toMatch(/declined|insufficient_funds/i);
  });

  it("a completed, paid checkout session means no follow-up; a wrong signature gets 401", async () => {
    const p = prebook({ email: `${unique("guest")}@example.com` });
    const instance = await startCheckout(p, { hold: true });
    const completed = stripeEvent("checkout.session.completed", { id: unique("cs_"), object: "checkout.session", status: "complete", payment_status: "paid", client_reference_id: p.reference, payment_intent: unique("pi_") });
    const bad = await postStripe(completed, { secret: "whsec_wrong" });
    expect(bad.status).toBe(401);
    await runStripe(completed);
    const out = await finish(instance);
    expect(out.emails).toEqual([]);
    expect(await rows("SELECT outcome FROM checkout_attempts WHERE prebook_id = ?", p.prebookId)).toEqual([{ outcome: "paid" }]);
  });
});
