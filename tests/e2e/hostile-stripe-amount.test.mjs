// Hostile review: a holder of the Stripe endpoint secret sets how much a compensation refunds.
// docs/internals.md says which intent a compensation refunds "and how much, is read from Stripe's API …
// never from a webhook body". But the captured amount the refund plan caps a supplier's refund
// at (and subtracts a supplier's fee from) is `payments.amount_minor`, which any signed
// `checkout.session.completed` overwrites (`amount_total`). The proof only checks the amount is
// not ABOVE what Stripe says remains refundable, so a forged lower amount goes through: the owner's
// click refunds EUR 1.00 of a EUR 540.00 payment the supplier said was EUR 499.50 refundable, and
// the guest is told their payment "has been refunded". (Forging a higher amount instead makes a
// supplier's fee refunded to the guest: captured − fee is then everything Stripe holds.)
import { describe, it, expect } from "vitest";
import { bookedThenAmountForged, cancelledWithCharges, compensationOf, postLink, queuedEmail, refundLinks, refundPosts, runLiteapiEvent } from "./compensation-helpers.mjs";


describe("hostile: the Stripe endpoint secret sets the refund's amount", () => {
  it("a forged checkout.session.completed cannot lower what a supplier cancellation refunds", async () => {
    // The real payment: EUR 540.00, on Stripe's record. The forgery: the same session and intent,
    // "amount_total": 100 — Stripe never said so.
    const c = await bookedThenAmountForged(100);

    await runLiteapiEvent(cancelledWithCharges(c, { fee: 40.5, refund: 499.5 }));
    const comp = await compensationOf(c);
    const owner = await queuedEmail(`owner_compensation:${comp.compensation_id}`);
    const acted = await postLink(refundLinks(owner.text).now);
    expect(acted.status, await acted.clone().text()).toBe(200);
    const posts = await refundPosts(c.pi);
    console.log(`hostile stripe amount: step amount_minor ${comp.steps.refund.amount_minor}; refund requested ${posts.map((p) => p.params.amount).join(", ")} (supplier said 49950 of 54000 captured)`);
    expect(posts.map((p) => p.params.amount)).toEqual(["49950"]);
  });
});
