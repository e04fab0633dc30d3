// Hostile review, COMPENSATION_REFUND_POLICY = automatic: the same hole as
// tests/e2e/hostile-proof-cross-kind.test.mjs without any click. The partner's own payment is a
// delayed payment method still processing (`checkout.session.completed` with
// `payment_status: "unpaid"` → `processing`, which the plan refunds automatically); the proof
// looks that intent up first (not succeeded: not proven), then falls through to the next hint —
// the victim's intent the failure named — and "proves" it through the failure's booking id, which
// is the victim's client reference. The journey refunds the victim's payment in full by itself.
import { describe, it, expect } from "vitest";
import { acmeFailsNamingVictim, refundPosts } from "../e2e/compensation-helpers.mjs";


describe("hostile (automatic): the proof falls through to a supplier-named intent linked by a chosen booking id", () => {
  it("a partner whose own payment is still processing cannot make the journey refund the victim's payment", async () => {
    const { victim, comp } = await acmeFailsNamingVictim({
      // A delayed payment method: Stripe's intent is processing.
      ownSession: (session) => (session.payment_status = "unpaid"),
      bookingId: (victim) => victim.reference,
    });
    const posts = await refundPosts(victim.pi);
    console.log("hostile cross-kind (automatic):", JSON.stringify({ state: comp.state, step: { status: comp.steps.refund.status, payment_intent: comp.steps.refund.payment_intent, amount_minor: comp.steps.refund.amount_minor, proof: comp.steps.refund.proof }, posts: posts.map((p) => p.params) }));
    expect(posts, "no refund of the victim's payment may reach Stripe").toEqual([]);
    expect(comp.steps.refund.payment_intent).not.toBe(victim.pi);
  });
});
