// What a compensation refunds is Stripe's figure: the supplier's fee is subtracted from what
// Stripe's API says the payment intent captured, never from an amount a payment webhook's body
// wrote (a forged `checkout.session.completed` above the real capture would otherwise refund the
// supplier's fee to the guest), and a fee that covers Stripe's capture refunds nothing.
import { describe, it, expect } from "vitest";
import { bookedThenAmountForged, cancelledWithCharges, compensationOf, postLink, queuedEmail, refundLinks, refundPosts, runLiteapiEvent } from "./compensation-helpers.mjs";


/** liteAPI's cancellation of checkout `c` with a fee (EUR) and no refund amount. */
async function cancelledWithFee(c, fee) {
  await runLiteapiEvent(cancelledWithCharges(c, { fee }));
  return compensationOf(c);
}

describe("a compensation's amount is Stripe's figure", () => {
  it("a forged higher amount_total does not make the supplier's fee refunded: the fee comes off what Stripe captured", async () => {
    const c = await bookedThenAmountForged(99_900); // EUR 540.00 at Stripe

    const comp = await cancelledWithFee(c, 40.5);
    expect(comp.steps.refund).toMatchObject({ status: "awaiting_owner", payment_intent: c.pi, amount_minor: 49_950, currency: "EUR" });
    expect(comp.steps.refund.proof).toContain("EUR 540.00 captured");
    const owner = await queuedEmail(`owner_compensation:${comp.compensation_id}`);
    const acted = await postLink(refundLinks(owner.text).now);
    expect(acted.status, await acted.clone().text()).toBe(200);
    expect((await refundPosts(c.pi)).map((p) => p.params.amount)).toEqual(["49950"]);
  });

  it("a fee covering what Stripe captured refunds nothing, whatever a webhook said was paid", async () => {
    const c = await bookedThenAmountForged(99_900); // EUR 540.00 at Stripe

    const comp = await cancelledWithFee(c, 540);
    expect(comp.steps.refund).toMatchObject({ status: "awaiting_owner", amount_minor: 0, payment_intent: null });
    expect(comp.steps.refund.detail).toContain("leaves nothing to refund of the EUR 540.00 Stripe says payment intent");
    const owner = await queuedEmail(`owner_compensation:${comp.compensation_id}`);
    // The owner's "refund now" is refused with the reason; nothing reaches Stripe.
    const acted = await postLink(refundLinks(owner.text).now);
    expect(await acted.text()).toContain("fee covers the whole payment");
    expect(await refundPosts(c.pi)).toEqual([]);
  });
});
