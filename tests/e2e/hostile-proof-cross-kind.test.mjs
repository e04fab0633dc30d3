// Hostile review: the payment proof matches a Checkout Session's reference against ANY of the
// compensation's ids (client reference, prebook id, booking id), and a failure's booking id and
// prebook id are the partner's free choice (only checked against other owners' booking ids and
// prebook ids, never against the client references other owners' checkouts record).
//
// Credential: one generic partner's webhook secret (acme). Steps: acme books its own stay with
// its own client reference and pays nothing for it (a session with no payment intent), then
// reports it failed with `booking_id` = the victim's client reference (what the victim's Stripe
// session names in `client_reference_id`) and `transaction_id` = the victim's payment intent.
// Stripe's record "proves" the victim's intent is acme's compensation's ("Checkout Session …
// client_reference_id is this compensation's booking id trip_…"), the step holds the victim's
// intent and full amount, and the owner's "refund now" refunds the victim's payment in full while
// the victim's booking stands.
import { SELF } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { acmeFailsNamingVictim, chargesNothing, compensationOf, refundPosts } from "./compensation-helpers.mjs";
import { OPERATOR } from "./helpers.mjs";



describe("hostile: the proof links a session's reference to a booking id the partner chose", () => {
  it("a partner naming the victim's client reference as its failure's booking id cannot get the victim's payment refunded", async () => {
    // The victim: a liteAPI checkout, paid through Stripe (session client_reference_id = its reference).
    // acme: its own stay and a session for it that charges nothing.
    // The failure: booking_id is the victim's client reference, transaction_id the victim's intent.
    const { victim, a, comp } = await acmeFailsNamingVictim({ ownSession: chargesNothing, bookingId: (victim) => victim.reference });
    expect(comp).toMatchObject({ source: "generic", partner: "acme" });

    // The owner clicks "refund now" (JSON API; the refunds page and the alert's link do the same).
    const api = await SELF.fetch("https://engine.test/admin/compensations/act", {
      method: "POST",
      headers: OPERATOR,
      body: JSON.stringify({ compensationId: comp.compensation_id, action: "refund_now" }),
    });
    const answer = await api.json();
    const step = (await compensationOf(a)).steps.refund;
    const posts = await refundPosts(victim.pi);
    // Evidence of the hole, printed for the report.
    console.log("hostile cross-kind:", JSON.stringify({ answer, proof: step.proof, payment_intent: step.payment_intent, amount_minor: step.amount_minor, posts: posts.map((p) => p.params) }));
    expect(step.payment_intent, "the victim's intent must never be kept as acme's proven payment").not.toBe(victim.pi);
    expect(posts, "no refund of the victim's payment may reach Stripe").toEqual([]);
  });
});
