// Hostile review, COMPENSATION_REFUND_POLICY = automatic: the same hole as
// tests/e2e/hostile-proof-cross-kind.test.mjs without any click. The partner's own payment is a
// delayed payment method still processing (`checkout.session.completed` with
// `payment_status: "unpaid"` → `processing`, which the plan refunds automatically); the proof
// looks that intent up first (not succeeded: not proven), then falls through to the next hint —
// the victim's intent the failure named — and "proves" it through the failure's booking id, which
// is the victim's client reference. The journey refunds the victim's payment in full by itself.
import { describe, it, expect } from "vitest";
import { acmeStay, checkout, compensationOf, paidSession, recordCheckout, refundPosts, runStripeEvent } from "../e2e/compensation-helpers.mjs";
import { PARTNERS, runGenericAs } from "../e2e/helpers.mjs";


describe("hostile (automatic): the proof falls through to a supplier-named intent linked by a chosen booking id", () => {
  it("a partner whose own payment is still processing cannot make the journey refund the victim's payment", async () => {
    const victim = await recordCheckout(checkout());
    await runStripeEvent(paidSession(victim));

    const a = checkout();
    await runGenericAs("acme", PARTNERS.acme[0], acmeStay(a));
    const slow = paidSession(a);
    slow.data.object.payment_status = "unpaid"; // a delayed payment method: Stripe's intent is processing
    await runStripeEvent(slow);

    const failed = await runGenericAs("acme", PARTNERS.acme[0], {
      type: "booking_failed",
      data: { booking_kind: "hotel", booking_id: victim.reference, client_reference: a.reference, transaction_id: victim.pi, reason: "Overbooked" },
    });
    expect(failed.output.failed).toEqual([]);
    const comp = await compensationOf(a);
    const posts = await refundPosts(victim.pi);
    console.log("hostile cross-kind (automatic):", JSON.stringify({ state: comp.state, step: { status: comp.steps.refund.status, payment_intent: comp.steps.refund.payment_intent, amount_minor: comp.steps.refund.amount_minor, proof: comp.steps.refund.proof }, posts: posts.map((p) => p.params) }));
    expect(posts, "no refund of the victim's payment may reach Stripe").toEqual([]);
    expect(comp.steps.refund.payment_intent).not.toBe(victim.pi);
  });
});
