// Compensation under the default policy (COMPENSATION_REFUND_POLICY = owner), inside workerd with
// the fake Stripe API of tests/e2e/fake-stripe.mjs: nothing is refunded until the owner's POST on
// a signed single-use link; Stripe's refund webhooks confirm or reopen the refund, and a forged or
// replayed one changes nothing. (Automatic refunds: tests/e2e-automatic/.) Also: the guest's
// cancellation notice of a booking whose confirmation had gone out takes its event out of the
// guest's calendar (parsed with ical.js), and a partner's failure naming a liteAPI checkout's client
// reference opens nothing, so liteAPI's own failure of it still compensates.
import { describe, it, expect } from "vitest";
import ICAL from "ical.js";
import {
  bookErrorBody,
  bookedBody,
  checkout,
  compensationOf,
  failStripe,
  failedAfterPayment,
  getLink,
  paidSession,
  postLink,
  postStripe,
  queuedEmail,
  recordCheckout,
  refundLinks,
  refundPosts,
  refundUpdated,
  runJourney,
  runLiteapiEvent,
  runStripeEvent,
  setRefundStatus,
  stripeRequests,
} from "./compensation-helpers.mjs";
import { PARTNERS, formNonce, instanceIdOf, postGeneric, rows, sendThrough, submitActionForm, unique } from "./helpers.mjs";
import { SELF, env } from "cloudflare:test";

/** The one calendar attachment of a message, parsed with ical.js (as tests/e2e/language-and-calendar.test.mjs). */
function calendarOf(message) {
  const parts = message.attachments.filter((a) => a.type.startsWith("text/calendar"));
  expect(parts, message.subject).toHaveLength(1);
  const [part] = parts;
  expect(part.filename).toBe("stay.ics");
  const method = /method=([A-Z]+)/.exec(part.type)?.[1];
  const comp = new ICAL.Component(ICAL.parse(part.content));
  expect(comp.getFirstPropertyValue("method")).toBe(method);
  const events = comp.getAllSubcomponents("vevent").map((v) => new ICAL.Event(v));
  return { method, comp, events };
}

/** The one message the send_email binding got for `to` with `subject`. */
async function sentWith(to, subject) {
  const found = (await env.EMAIL.messages(to)).filter((m) => m.subject === subject);
  expect(found, `${to}: ${subject}`).toHaveLength(1);
  return found[0];
}

/** Runs a generic event of partner acme to completion (sleeps off); returns its output and stored event id. */
async function asAcme(type, data) {
  const id = unique("msg_");
  const eventId = `acme/${id}`;
  const output = await runJourney(await instanceIdOf("generic", eventId), async () => (await postGeneric(JSON.stringify({ type, data }), { id, secret: PARTNERS.acme[0] })).response, { disableSleeps: true });
  return { output, eventId };
}

describe("compensation, owner policy (the default)", () => {
  it("no refund request until the owner's POST; the guest reads that the refund is being arranged", async () => {
    const { c, comp, owner, links } = await failedAfterPayment();
    expect(await stripeRequests(c.pi)).toEqual([]);
    expect(comp.state).toBe("arranging");
    expect(comp.steps.refund.status).toBe("awaiting_owner");
    expect(comp.steps.refund.detail).toMatch(/COMPENSATION_REFUND_POLICY is owner/);
    const guest = await queuedEmail(`booking_not_confirmed:${comp.compensation_id}`);
    expect(guest.text).toContain("We are arranging your refund");
    expect(guest.text).not.toMatch(/has been refunded|is being refunded|not been charged/);
    expect(guest.html).not.toContain("/actions/");
    expect(owner.text).toContain("Refund: waiting for you");
    expect(links.now).toMatch(/^https:\/\/engine\.test\/actions\//);
    expect(links.handled).toMatch(/^https:\/\/engine\.test\/actions\//);
    expect(owner.html).toContain(links.now.replace(/&/g, "&amp;"));

    const page = await getLink(links.now);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(c.email);
    expect(await stripeRequests(c.pi)).toEqual([]); // opening the page refunds nothing

    const acted = await postLink(links.now);
    const text = await acted.text();
    expect(acted.status, text).toBe(200);
    expect(text).toContain("Refund requested");
    const posts = await refundPosts(c.pi);
    expect(posts).toHaveLength(1);
    expect(posts[0].key).toBe(`${comp.compensation_id}-refund-r1`);
    const after = await compensationOf(c);
    expect(after.steps.refund).toMatchObject({ status: "done", provider_status: "succeeded" });
    expect(after.state).toBe("refunded");
    expect(await rows("SELECT action FROM owner_actions WHERE hold_id = ?", comp.compensation_id)).toEqual([{ action: "refund_now" }]);

    // The same link again, and the other link: nothing more.
    expect((await postLink(links.now)).status).toBe(410);
    expect((await postLink(links.handled)).status).toBe(409);
    expect(await refundPosts(c.pi)).toHaveLength(1);
  });

  it("\u201calready handled\u201d records the refund as settled outside the engine and calls Stripe never", async () => {
    const { c, links } = await failedAfterPayment();
    const r = await postLink(links.handled);
    expect(r.status, await r.clone().text()).toBe(200);
    const comp = await compensationOf(c);
    expect(comp.steps.refund).toMatchObject({ status: "done", detail: "marked handled by the owner outside the engine" });
    expect(comp.state).toBe("handled");
    expect((await postLink(links.now)).status).toBe(409);
    expect(await stripeRequests(c.pi)).toEqual([]);
  });

  it("Stripe unreachable on the owner's click: nothing refunded, the link works again and then refunds once", async () => {
    const { c, links } = await failedAfterPayment();
    await failStripe(c.pi, ["503"]);
    const first = await postLink(links.now);
    expect(first.status).toBe(503);
    expect(await first.text()).toContain("The link works again");
    expect((await compensationOf(c)).steps.refund.status).toBe("awaiting_owner");
    const second = await postLink(links.now);
    expect(second.status, await second.clone().text()).toBe(200);
    const posts = await refundPosts(c.pi);
    expect(posts.map((p) => p.status)).toEqual([503, 200]);
    expect(new Set(posts.map((p) => p.key)).size).toBe(1);
  });

  it("a refund claim abandoned mid-way (a request cut off) is taken over by the owner's link after the lease, looking at Stripe first", async () => {
    const { c, comp, links } = await failedAfterPayment();
    // The fault: an actor claimed the refund, sent its key, and died before recording anything.
    const key = `${comp.compensation_id}-refund-r1`;
    const stuck = (ms) =>
      rows(
        "UPDATE compensation_steps SET status = 'running', claimed_by = 'owner:dead', idempotency_key = ?, updated_at_ms = ? WHERE compensation_id = ? AND step = 'refund' RETURNING status",
        key,
        ms,
        comp.compensation_id,
      );
    await stuck(Date.now());
    const fresh = await postLink(links.now);
    expect(fresh.status).toBe(409); // a live claim is never taken over
    await stuck(Date.now() - 6 * 60_000);
    const acted = await postLink(links.handled);
    expect(acted.status, await acted.clone().text()).toBe(200);
    const after = await compensationOf(c);
    expect(after.steps.refund).toMatchObject({ status: "done", detail: "marked handled by the owner outside the engine" });
    expect(after.steps.refund.claimed_by).toMatch(/^owner:/);
    expect(after.steps.refund.claimed_by).not.toBe("owner:dead");
    expect(await stripeRequests(c.pi)).toEqual([]);
  });

  it("refund links act only from their own page: a bare, cross-site or wrong-nonce POST refunds nothing and shows the page again; the form refunds once; its nonce replayed refunds nothing more", async () => {
    const { c, comp, links } = await failedAfterPayment();
    const nonce = formNonce(await (await SELF.fetch(links.now)).text());
    const handledNonce = formNonce(await (await SELF.fetch(links.handled)).text());
    for (const post of [
      () => SELF.fetch(links.now, { method: "POST" }),
      () => submitActionForm(links.now, { nonce, headers: { "sec-fetch-site": "cross-site" } }),
      () => submitActionForm(links.now, { nonce, headers: { origin: "https://evil.example" } }),
      () => submitActionForm(links.now, { nonce: handledNonce }),
      () => submitActionForm(links.now, { nonce: null }),
    ]) {
      const r = await post();
      expect(r.status).toBe(403);
      const html = await r.text();
      expect(html).toContain("Nothing was done.");
      expect(html).toContain(comp.compensation_id);
    }
    expect(await stripeRequests(c.pi)).toEqual([]);
    expect(await rows("SELECT COUNT(*) AS n FROM owner_actions WHERE hold_id = ?", comp.compensation_id)).toEqual([{ n: 0 }]);
    expect((await compensationOf(c)).steps.refund.status).toBe("awaiting_owner");

    const acted = await submitActionForm(links.now, { nonce });
    expect(acted.status, await acted.clone().text()).toBe(200);
    expect(await refundPosts(c.pi)).toHaveLength(1);
    expect((await submitActionForm(links.now, { nonce })).status).toBe(410);
    expect(await refundPosts(c.pi)).toHaveLength(1);
  });

  it("a tampered, foreign or unknown refund link changes nothing", async () => {
    const { c, links } = await failedAfterPayment();
    const tampered = links.now.slice(0, -3) + (links.now.endsWith("AAA") ? "BBB" : "AAA");
    expect((await postLink(tampered)).status).toBe(403);
    expect((await postLink("https://engine.test/actions/not-a-token")).status).toBe(403);
    expect(await stripeRequests(c.pi)).toEqual([]);
    expect((await compensationOf(c)).steps.refund.status).toBe("awaiting_owner");
  });

  it("Stripe's refund.updated confirms a refund; a later \u201cfailed\u201d reopens it for the owner with new links, once", async () => {
    const { c, links } = await failedAfterPayment();
    await failStripe(c.pi, ["pending"]);
    expect((await postLink(links.now)).status).toBe(200);
    let comp = await compensationOf(c);
    expect(comp.state).toBe("refunding");
    const refundId = comp.steps.refund.provider_id;

    await runStripeEvent(refundUpdated(c, refundId, "succeeded"));
    comp = await compensationOf(c);
    expect(comp.state).toBe("refunded");
    expect(comp.steps.refund.provider_status).toBe("succeeded");

    await setRefundStatus(refundId, "failed");
    const failed = refundUpdated(c, refundId, "failed", { failure_reason: "expired_or_canceled_card" });
    const out = await runStripeEvent(failed);
    expect(out.emails.map(([k]) => k)).toEqual([`owner_compensation:${comp.compensation_id}:refund_failed_1`]);
    comp = await compensationOf(c);
    expect(comp.state).toBe("refund_failed");
    expect(comp.steps.refund).toMatchObject({ status: "failed", provider_status: "failed" });
    expect(comp.steps.refund.error).toContain("expired_or_canceled_card");
    const alert = await queuedEmail(`owner_compensation:${comp.compensation_id}:refund_failed_1`);
    expect(alert.text).toContain("Refund failed at Stripe");
    const again = refundLinks(alert.text);
    expect(again.now).toBeTruthy();
    expect(again.now).not.toBe(links.now);
    // The first alert's unused link was for round 1: out of date now.
    const stale = await postLink(links.handled);
    expect(stale.status).toBe(409);
    expect(await stale.text()).toContain("out of date");

    // A second "failed" for the same refund (another event id) adds no second alert.
    const twice = await runStripeEvent(refundUpdated(c, refundId, "failed"));
    expect(twice.emails).toEqual([]);

    // The new link refunds in round 2 under a new key, after looking at the refunds Stripe has:
    // the earlier one failed, so one new refund is made.
    expect((await postLink(again.now)).status).toBe(200);
    const requests = await stripeRequests(c.pi);
    expect(requests.map((r) => [r.method, r.key])).toEqual([
      ["POST", `${comp.compensation_id}-refund-r1`],
      ["GET", null],
      ["POST", `${comp.compensation_id}-refund-r2`],
    ]);
    comp = await compensationOf(c);
    expect(comp.steps.refund).toMatchObject({ status: "done", round: 2 });
    expect(comp.steps.refund.provider_id).not.toBe(refundId);
  });

  it("a forged or replayed Stripe refund webhook changes nothing", async () => {
    const { c, links } = await failedAfterPayment();
    expect((await postLink(links.now)).status).toBe(200);
    const comp = await compensationOf(c);
    const before = JSON.stringify(comp.steps.refund);
    const event = refundUpdated(c, comp.steps.refund.provider_id, "failed");

    const forged = await postStripe(event, { secret: "whsec_attacker" });
    expect(forged.status).toBe(401);
    const stale = await postStripe(event, { t: Math.floor(Date.now() / 1000) - 3600 });
    expect(stale.status).toBe(401);
    const altered = await postStripe(event, { sent: JSON.stringify(event).replace('"failed"', '"canceled"') });
    expect(altered.status).toBe(401);
    expect(JSON.stringify((await compensationOf(c)).steps.refund)).toBe(before);
    expect(await rows("SELECT COUNT(*) AS n FROM raw_events WHERE event_id = ? AND status != 'rejected'", event.id)).toEqual([{ n: 0 }]);

    // Delivered properly once, then replayed: the replay is a duplicate and starts nothing.
    await runStripeEvent(event);
    const once = JSON.stringify((await compensationOf(c)).steps.refund);
    const replay = await postStripe(event);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ status: "duplicate" });
    expect(JSON.stringify((await compensationOf(c)).steps.refund)).toBe(once);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE dedupe_key = ?", `owner_compensation:${comp.compensation_id}:refund_failed_1`)).toEqual([{ n: 1 }]);
  });

  it("a refund event for a payment no compensation refunded is recorded and changes nothing", async () => {
    const c = checkout();
    const out = await runStripeEvent(refundUpdated(c, unique("re_dash_"), "succeeded"));
    expect(out.skipped).toEqual([["refund_updated", "no compensation refund changed"]]);
    expect(await compensationOf(c)).toBeNull();
  });

  it("the supplier fails a paid booking after its confirmation went out: the guest's cancellation notice cancels the confirmation's calendar event (METHOD:CANCEL, the same UID)", async () => {
    const c = checkout();
    await runStripeEvent(paidSession(c));
    const booked = await runLiteapiEvent(bookedBody(c), { disableSleeps: true });
    expect(booked.failed ?? []).toEqual([]);
    await sendThrough(`booking_confirmation:${c.bookingId}`);
    const confirmation = (await env.EMAIL.messages(c.email)).find((m) => m.attachments.some((a) => a.type.includes("method=PUBLISH")));
    expect(confirmation, "the confirmation with its calendar part").toBeTruthy();
    const stay = calendarOf(confirmation).events[0];
    expect(stay.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    await runLiteapiEvent(bookErrorBody(c));
    const comp = await compensationOf(c);
    expect(comp.steps.withdraw_emails.detail).toMatch(/confirmation had already been sent/);
    await sendThrough(`booking_not_confirmed:${comp.compensation_id}`);
    const notice = await sentWith(c.email, "Your booking has been cancelled");
    const off = calendarOf(notice);
    expect(off.method).toBe("CANCEL");
    expect(off.events).toHaveLength(1);
    expect(off.events[0].uid).toBe(stay.uid);
    expect(off.events[0].sequence).toBeGreaterThan(stay.sequence);
    expect(off.comp.getFirstSubcomponent("vevent").getFirstPropertyValue("status")).toBe("CANCELLED");
    expect(off.events[0].startDate.toString()).toBe(stay.startDate.toString());
  }, 120_000);

  it("a partner's failure naming only a liteAPI checkout's client reference opens nothing; liteAPI's own failure of that checkout, by the same reference, opens liteAPI's compensation and queues the guest's notice", async () => {
    const c = await recordCheckout(checkout());
    await runStripeEvent(paidSession(c));
    const attempt = await rows("SELECT * FROM checkout_attempts WHERE prebook_id = ?", c.prebookId);

    const attacker = `${unique("attacker")}@example.com`;
    const foreign = await asAcme("booking_failed", { booking_kind: "hotel", client_reference: c.reference, email: attacker, reason: "Overbooked" });
    const reason = `client reference ${c.reference} belongs to liteapi; this event came from generic partner "acme"`;
    expect(foreign.output.skipped).toEqual([["booking_failed", `refused: ${reason}`]]);
    expect(await rows("SELECT refused_reason FROM raw_events WHERE source = 'generic' AND event_id = ?", foreign.eventId)).toEqual([{ refused_reason: reason }]);
    // It changed nothing: no compensation, no guest mail, the checkout as it was.
    expect(await compensationOf(c)).toBeNull();
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE to_addr = ?", attacker)).toEqual([{ n: 0 }]);
    expect(await rows("SELECT * FROM checkout_attempts WHERE prebook_id = ?", c.prebookId)).toEqual(attempt);

    // liteAPI's own failure naming the checkout by its client reference only: its compensation's
    // id is the one the partner's claim would have taken.
    const own = bookErrorBody(c);
    const envelope = JSON.parse(own.body);
    const request = JSON.parse(envelope.request);
    delete request.prebookId;
    envelope.request = JSON.stringify(request);
    own.body = JSON.stringify(envelope);
    const out = await runLiteapiEvent(own);
    expect(out.failed).toEqual([]);
    expect((out.skipped ?? []).filter(([, why]) => why.startsWith("refused"))).toEqual([]);
    const comp = await compensationOf(c);
    expect(comp).toMatchObject({ source: "liteapi", partner: null, cause: "supplier_failed", prebook_id: null });
    expect(comp.steps.refund.status).toBe("awaiting_owner");
    expect(comp.steps.guest_notice.status).toBe("done");
    const guest = await queuedEmail(`booking_not_confirmed:${comp.compensation_id}`);
    expect(guest.to).toBe(c.email);
    expect(guest.text).toContain("We are arranging your refund");
  });
});
