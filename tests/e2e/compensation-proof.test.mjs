// Proof before any refund, under the default policy (COMPENSATION_REFUND_POLICY = owner), inside
// workerd with the fake Stripe of tests/e2e/fake-stripe.mjs, which keeps its own record of which
// Checkout Session created which payment intent. A generic partner books its own stay, its Stripe
// session for that stay charges nothing, then it fails the booking naming someone else's payment
// intent: the engine looks the intent up at Stripe, finds the session of another reference, and
// refunds nothing — not on the owner's click, not from the refunds page, not through the JSON API;
// the alert and the page offer "already handled" only and say what Stripe returned. The
// legitimate path still refunds once, naming its amount.
import { SELF } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import {
  acmeFailsNamingVictim, bookErrorBody, chargesNothing, checkout, compensationOf, getLink, paidSession, postLink, queuedEmail,
  recordCheckout, refundLinks, refundPosts, runLiteapiEvent, runStripeEvent, stripeLookups,
} from "./compensation-helpers.mjs";
import { OPERATOR, adminCookie, adminForm, adminPage, unique } from "./helpers.mjs";

/**
 * The scenario: a liteAPI guest paid (Stripe records the session of their reference and its
 * payment intent); partner acme books its own stay, its session for that stay charges nothing (no
 * payment intent), then acme reports the booking failed naming the guest's payment intent as its
 * `transaction_id`. Returns the victim's and acme's checkouts and acme's compensation.
 */
async function hostileFailure() {
  const failure = await acmeFailsNamingVictim({ ownSession: chargesNothing, bookingId: (_victim, a) => a.bookingId });
  expect(failure.comp).toMatchObject({ source: "generic", partner: "acme", payment_intent: failure.victim.pi });
  return failure;
}

describe("proof before any refund (owner policy)", () => {
  it("someone else's payment intent named by a partner is looked up at Stripe and never refunded: the owner's click, the refunds page and the JSON API refund nothing", async () => {
    const { victim, a, comp } = await hostileFailure();
    // The owner's "refund now" from the refunds page, and the JSON API's: nothing reaches Stripe.
    const cookie = await adminCookie();
    const forced = await adminForm(cookie, "/admin/refunds", "/admin/refunds/act", { compensation_id: comp.compensation_id, action: "refund_now" });
    const api = await SELF.fetch("https://engine.test/admin/compensations/act", { method: "POST", headers: OPERATOR, body: JSON.stringify({ compensationId: comp.compensation_id, action: "refund_now" }) });
    expect(await refundPosts(victim.pi)).toEqual([]);
    expect(new URL(forced.headers.get("location"), "https://engine.test").searchParams.get("done")).toBe("refund_not_proven");
    expect(await api.json()).toMatchObject({ outcome: "not_proven", detail: expect.stringContaining(victim.reference) });
    expect((await compensationOf(a)).steps.refund.status).toBe("awaiting_owner");

    // The engine asked Stripe about the named intent, and Stripe's session names another reference.
    expect((await stripeLookups(victim.pi)).map((l) => [l.path, l.status])).toEqual([
      [`/v1/payment_intents/${victim.pi}`, 200],
      ["/v1/checkout/sessions", 200],
      [`/v1/payment_intents/${victim.pi}`, 200],
      ["/v1/checkout/sessions", 200],
      [`/v1/payment_intents/${victim.pi}`, 200],
      ["/v1/checkout/sessions", 200],
    ]);
    const step = (await compensationOf(a)).steps.refund;
    expect(step.payment_intent).toBeNull();
    expect(step.detail).toMatch(/^not refunded by the engine: Stripe's record does not tie this payment to this compensation/);
    expect(step.proof).toContain(`Checkout Session cs_${victim.pi} names client_reference_id ${victim.reference}`);
    expect(step.proof).toContain(a.reference);

    // The alert says why, with what Stripe returned, and offers "already handled" only.
    const alert = await queuedEmail(`owner_compensation:${comp.compensation_id}`);
    const links = refundLinks(alert.text);
    expect(links.now).toBeUndefined();
    expect(links.handled).toMatch(/^https:\/\/engine\.test\/actions\//);
    expect(alert.text).toContain(`names client_reference_id ${victim.reference}`);

    // The refunds page: no "refund now" for it, the reason shown.
    const page = await adminPage("/admin/refunds", cookie);
    const row = page.split('<tr class="refund">').find((r) => r.includes(comp.compensation_id));
    expect(row).toBeTruthy();
    expect(row).not.toContain('value="refund_now"');
    expect(row).toContain('value="refund_handled"');
    expect(row).toContain("does not tie this payment to this compensation");

    // "Already handled" still closes it, without a Stripe call.
    expect((await postLink(links.handled)).status).toBe(200);
    expect((await compensationOf(a)).state).toBe("handled");
    expect(await refundPosts(victim.pi)).toEqual([]);
  });

  it("the legitimate path: the payment Stripe ties to the checkout is proven when the alert goes out, and the owner's click refunds it once, naming its amount", async () => {
    const c = await recordCheckout(checkout());
    await runStripeEvent(paidSession(c));
    const out = await runLiteapiEvent(bookErrorBody(c));
    expect(out.failed).toEqual([]);
    const comp = await compensationOf(c);
    expect(comp.steps.refund).toMatchObject({ status: "awaiting_owner", payment_intent: c.pi, amount_minor: 54000, currency: "EUR" });
    expect(comp.steps.refund.proof).toContain(`Checkout Session cs_${c.pi} client_reference_id is this compensation's client reference ${c.reference}`);
    const links = refundLinks((await queuedEmail(`owner_compensation:${comp.compensation_id}`)).text);
    expect((await getLink(links.now)).status).toBe(200);
    const acted = await postLink(links.now);
    expect(acted.status, await acted.clone().text()).toBe(200);
    const posts = await refundPosts(c.pi);
    expect(posts).toHaveLength(1);
    expect(posts[0].params).toMatchObject({ payment_intent: c.pi, amount: "54000" });
    expect((await compensationOf(c)).state).toBe("refunded");
  });

  it("a payment webhook a holder of the Stripe endpoint secret forged (an intent claimed for a reference) proves nothing: Stripe's own record decides", async () => {
    const victim = await recordCheckout(checkout());
    await runStripeEvent(paidSession(victim));
    // The forged claim: the victim's intent "paid the checkout" of another liteAPI reference.
    const other = await recordCheckout(checkout());
    const forged = paidSession({ ...other, pi: victim.pi }, { id: unique("evt_forged_") });
    await runStripeEvent(forged, { recordAtStripe: false });
    await runLiteapiEvent(bookErrorBody(other));
    const comp = await compensationOf(other);
    expect(comp.steps.refund).toMatchObject({ status: "awaiting_owner", payment_intent: null });
    expect(comp.steps.refund.proof).toContain(`names client_reference_id ${victim.reference}`);
    const api = await SELF.fetch("https://engine.test/admin/compensations/act", { method: "POST", headers: OPERATOR, body: JSON.stringify({ compensationId: comp.compensation_id, action: "refund_now" }) });
    expect((await api.json()).outcome).toBe("not_proven");
    expect(await refundPosts(victim.pi)).toEqual([]);
  });
});
