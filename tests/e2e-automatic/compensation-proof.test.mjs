// Proof before any refund with COMPENSATION_REFUND_POLICY = automatic (vitest.automatic.config.mjs),
// against the fake Stripe of tests/e2e/fake-stripe.mjs and its own record of payments: the refund
// step refunds only the payment intent Stripe ties to the compensation, and every retry after a
// transient error refunds exactly that one (same key, same intent, same amount) — never the intent
// a supplier named. Stripe unreachable during the look-up: the step waits and asks again.
import { describe, it, expect } from "vitest";
import {
  acmeStay, bookErrorBody, checkout, compensationOf, failStripe, paidSession, recordCheckout, refundPosts,
  runLiteapiEvent, runStripeEvent, stripeLookups,
} from "../e2e/compensation-helpers.mjs";
import { PARTNERS, runGenericAs, unique } from "../e2e/helpers.mjs";

describe("proof before any refund (automatic)", () => {
  it("a partner's failure naming someone else's intent, with a transient Stripe error on the first refund call: the retry refunds the proven intent, never the named one", async () => {
    const victim = await recordCheckout(checkout());
    await runStripeEvent(paidSession(victim));
    // acme's own stay, paid (Stripe's session of acme's reference created acme's intent).
    const a = checkout();
    await runStripeEvent(paidSession(a));
    await runGenericAs("acme", PARTNERS.acme[0], acmeStay(a));
    await failStripe(a.pi, ["500"]);
    const failed = await runGenericAs("acme", PARTNERS.acme[0], {
      type: "booking_failed",
      data: { booking_kind: "hotel", booking_id: a.bookingId, client_reference: a.reference, transaction_id: victim.pi, reason: "Overbooked" },
    });
    expect(failed.output.failed).toEqual([]);
    expect(await refundPosts(victim.pi)).toEqual([]);
    const posts = await refundPosts(a.pi);
    expect(posts.map((p) => p.status)).toEqual([500, 200]);
    expect(new Set(posts.map((p) => p.key)).size).toBe(1);
    for (const p of posts) expect(p.params).toMatchObject({ payment_intent: a.pi, amount: "54000" });
    const comp = await compensationOf(a);
    expect(comp.payment_intent).toBe(victim.pi); // what the failure named: a hint, nothing more
    expect(comp.steps.refund).toMatchObject({ status: "done", payment_intent: a.pi, amount_minor: 54000, attempts: 2 });
    expect(comp.state).toBe("refunded");
  });

  it("Stripe unreachable while the payment is looked up: nothing is refunded meanwhile, the step asks again and then refunds once", async () => {
    const c = await recordCheckout(checkout());
    await runStripeEvent(paidSession(c));
    await failStripe(c.pi, ["lookup500"]);
    const out = await runLiteapiEvent(bookErrorBody(c));
    expect(out.failed).toEqual([]);
    expect((await stripeLookups(c.pi)).map((l) => l.status)).toEqual([500, 200, 200]);
    const posts = await refundPosts(c.pi);
    expect(posts).toHaveLength(1);
    expect(posts[0].params.amount).toBe("54000");
    expect((await compensationOf(c)).state).toBe("refunded");
  });

  it("a forged payment webhook (the Stripe endpoint secret's holder claims an intent for a checkout) refunds nothing: Stripe's own session names another reference", async () => {
    const victim = await recordCheckout(checkout());
    await runStripeEvent(paidSession(victim));
    const other = await recordCheckout(checkout());
    await runStripeEvent(paidSession({ ...other, pi: victim.pi }, { id: unique("evt_forged_") }), { recordAtStripe: false });
    const out = await runLiteapiEvent(bookErrorBody(other));
    expect(out.failed).toEqual([]);
    expect(await refundPosts(victim.pi)).toEqual([]);
    const comp = await compensationOf(other);
    expect(comp.steps.refund).toMatchObject({ status: "awaiting_owner", payment_intent: null });
    expect(comp.steps.refund.proof).toContain(`names client_reference_id ${victim.reference}`);
  });
});
