// Least authority over money, with automatic refunds (vitest.automatic.config.mjs): a generic
// partner's credential cannot make the engine refund a payment of a liteAPI checkout, whatever ids
// its failure names (the booking, the prebook, the payment intent, the client reference; a failure
// naming a reference liteAPI's checkout or booking records opens nothing), cannot close a liteAPI
// booking through a compensation, and cannot stop liteAPI's own failure from refunding. Its own
// paid booking is refunded as any other. Nor can liteAPI's credential take a partner's payment by
// flooding the partner's client reference with prebooks of its own: the ownership verdicts read
// every owner of a reference, not a list cut at some length. Fake Stripe: tests/e2e/fake-stripe.mjs.
import { describe, it, expect } from "vitest";
import { PARTNERS, instanceIdOf, postGeneric, postLiteapi, rows, unique } from "../e2e/helpers.mjs";
import {
  acmeStay, bookErrorBody, bookedBody, checkout, compensationOf, paidSession, recordCheckout, refundPosts,
  runJourney, runLiteapiEvent, runStripeEvent, stripeRequests,
} from "../e2e/compensation-helpers.mjs";
import { liteapiPrebook } from "../e2e/payloads.mjs";

const [ACME] = PARTNERS.acme;

/** A liteAPI booking.prebook of the checkout: its attempt is recorded as liteAPI's. */
async function prebook(c) {
  await recordCheckout(c);
  expect(await rows("SELECT source FROM checkout_attempts WHERE prebook_id = ?", c.prebookId)).toEqual([{ source: "liteapi" }]);
}

/**
 * `n` liteAPI `booking.prebook` events of new checkouts that all carry client reference
 * `reference` and payment intent `pi`, posted `width` at a time; returns their prebook ids once
 * every attempt is stored as liteAPI's.
 */
async function prebooksCarrying(reference, pi, n, width = 8) {
  const ids = Array.from({ length: n }, () => unique("PB_FLOOD_"));
  const flood = (prebookId) => liteapiPrebook({ prebookId, reference, transactionId: pi, first: "Flood", last: "Attacker", email: "flood@example.com" }).body;
  for (let i = 0; i < ids.length; i += width) {
    await Promise.all(ids.slice(i, i + width).map((prebookId) => postLiteapi(flood(prebookId)).then((r) => expect(r.status).toBe(202))));
  }
  for (let i = 0; i < 400; i++) {
    const [{ n: stored }] = await rows("SELECT COUNT(*) AS n FROM checkout_attempts WHERE client_reference = ? AND source = 'liteapi'", reference);
    if (stored === n) return ids;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the prebooks were not recorded");
}

/** Runs a generic event of partner acme to completion (sleeps off); returns its output. */
async function acme(type, data) {
  const id = unique("msg_");
  const eventId = `acme/${id}`;
  return runJourney(await instanceIdOf("generic", eventId), async () => (await postGeneric(JSON.stringify({ type, data }), { id, secret: ACME })).response, { disableSleeps: true });
}

describe("a partner's failure events never move another source's money", () => {
  it("acme names a paid liteAPI checkout by booking, prebook, payment intent and client reference: no refund request, the booking stays confirmed; liteAPI's own failure still refunds once", async () => {
    const c = checkout();
    await prebook(c);
    await runStripeEvent(paidSession(c));
    await runLiteapiEvent(bookedBody(c), { disableSleeps: true });
    const reason = "Room no longer available";

    const byBooking = await acme("booking_failed", { booking_kind: "hotel", booking_id: c.bookingId, reason });
    expect(byBooking.skipped).toEqual([["booking_failed", `refused: booking ${c.bookingId} belongs to liteapi; this event came from generic partner "acme"`]]);
    const byPrebook = await acme("booking_failed", { booking_kind: "hotel", prebook_id: c.prebookId, reason });
    expect(byPrebook.skipped[0][1]).toMatch(new RegExp(`^refused: checkout ${c.prebookId} belongs to liteapi`));
    // Its own new prebook id, with the victim's payment intent and client reference: the
    // reference is recorded by liteAPI's checkout and booking, so the failure is refused.
    const ownPrebook = unique("ACME_PB_");
    const referenceRefused = new RegExp(`^refused: client reference ${c.reference} belongs to liteapi`);
    const withOwnPrebook = await acme("booking_failed", { booking_kind: "hotel", prebook_id: ownPrebook, transaction_id: c.pi, client_reference: c.reference, reason, email: "attacker@example.com" });
    expect(withOwnPrebook.skipped[0][1]).toMatch(referenceRefused);
    // The client reference and payment intent alone.
    const byReference = await acme("booking_failed", { booking_kind: "hotel", client_reference: c.reference, transaction_id: c.pi, reason });
    expect(byReference.skipped[0][1]).toMatch(referenceRefused);

    expect(await stripeRequests(c.pi)).toEqual([]);
    expect(await rows("SELECT status FROM bookings WHERE booking_id = ?", c.bookingId)).toEqual([{ status: "CONFIRMED" }]);
    // None of acme's claims opened a compensation.
    expect(await rows("SELECT compensation_id FROM compensations WHERE source = 'generic' AND (prebook_id = ? OR client_reference = ?)", ownPrebook, c.reference)).toEqual([]);
    expect(await rows("SELECT COUNT(*) AS n FROM raw_events WHERE source = 'generic' AND refused_reason IS NOT NULL AND booking_id = ?", c.bookingId)).toEqual([{ n: 1 }]);

    // liteAPI's own failure of its checkout: refunded once, the partner's claims do not stand in the way.
    const out = await runLiteapiEvent(bookErrorBody(c));
    expect(out.failed).toEqual([]);
    expect(await refundPosts(c.pi)).toHaveLength(1);
    const mine = await rows("SELECT state, source FROM compensations WHERE prebook_id = ?", c.prebookId);
    expect(mine).toEqual([{ state: "refunded", source: "liteapi" }]);
  });

  it("a failure named by acme before liteAPI's booking arrives never closes that booking", async () => {
    const c = checkout();
    await runStripeEvent(paidSession(c));
    await acme("booking_failed", { booking_kind: "hotel", client_reference: c.reference, reason: "Overbooked" });
    const out = await runLiteapiEvent(bookedBody(c), { disableSleeps: true });
    expect(out.emails.map(([k]) => k)).toContain(`booking_confirmation:${c.bookingId}`);
    expect(await rows("SELECT status FROM bookings WHERE booking_id = ?", c.bookingId)).toEqual([{ status: "CONFIRMED" }]);
    expect(await stripeRequests(c.pi)).toEqual([]);
  });

  it("acme's own paid booking that it fails is refunded automatically", async () => {
    const c = checkout();
    await runStripeEvent(paidSession(c));
    const bookingId = unique("AC_");
    await acme("hotel_booked", acmeStay(c, bookingId).data);
    await acme("booking_failed", { booking_kind: "hotel", booking_id: bookingId, client_reference: c.reference, reason: "Overbooked" });
    expect(await refundPosts(c.pi)).toHaveLength(1);
    const comp = await compensationOf(c);
    expect(comp).toMatchObject({ source: "generic", partner: "acme", booking_id: bookingId, state: "refunded" });
    expect(await rows("SELECT status FROM bookings WHERE booking_id = ?", bookingId)).toEqual([{ status: "FAILED" }]);
  });
  it("liteAPI floods acme's client reference with 55 prebooks of its own: a failure naming that reference is still refused as acme's, and one naming its own prebook refunds nothing of acme's payment", { timeout: 120_000 }, async () => {
    const c = checkout();
    await runStripeEvent(paidSession(c));
    const bookingId = unique("AC_");
    await acme("hotel_booked", acmeStay(c, bookingId).data);
    // More liteAPI records of the reference than any cut list of 50 would hold, read before
    // acme's booking.
    const flood = await prebooksCarrying(c.reference, c.pi, 55);

    // A failure of a checkout liteAPI never recorded, naming acme's reference: refused.
    const unrecorded = await runLiteapiEvent(bookErrorBody({ ...c, prebookId: unique("PB_NONE_") }));
    expect(unrecorded.skipped.map(([, why]) => why).join("\n")).toMatch(new RegExp(`^refused: client reference ${c.reference} belongs to generic partner "acme"`));
    // A failure of one of its own flood checkouts: its checkout vouches for the reference, but
    // acme's booking records the payment too, so the payment is never refunded on liteAPI's word.
    await runLiteapiEvent(bookErrorBody({ ...c, prebookId: flood[0] }));
    expect(await refundPosts(c.pi)).toEqual([]);
    expect(await stripeRequests(c.pi)).toEqual([]);
    expect(await rows("SELECT status FROM bookings WHERE booking_id = ?", bookingId)).toEqual([{ status: "CONFIRMED" }]);
    expect(await rows("SELECT state FROM compensations WHERE prebook_id = ? AND state = 'refunded'", flood[0])).toEqual([]);
  });
});
