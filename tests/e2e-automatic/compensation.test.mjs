// Compensation with COMPENSATION_REFUND_POLICY = automatic (vitest.automatic.config.mjs), inside
// workerd with the fake Stripe API of tests/e2e/fake-stripe.mjs: a paid booking the supplier
// failed is refunded once, whatever the order or number of the events and whatever Stripe answers;
// the guest gets one honest notice, the owner one alert.
import { describe, it, expect } from "vitest";
import { postDuffel, postLiteapi, rows, sendThrough, unique } from "../e2e/helpers.mjs";
import {
  bookCheckout,
  bookedBody,
  cancelledWithCharges,
  bookErrorBody,
  checkout,
  compensationOf,
  emailsLike,
  failStripe,
  getLink,
  paidSession,
  postLink,
  queuedEmail,
  recordCheckout,
  refundLinks,
  refundPosts,
  runJourney,
  runLiteapiEvent,
  runStripeEvent,
  stripeRequests,
} from "../e2e/compensation-helpers.mjs";
import { stripeEvent } from "../e2e/payloads.mjs";
import duffelFailed from "../fixtures/duffel-order-creation-failed.json";

/** A checkout whose payment Stripe has reported paid. */
async function paid() {
  const c = await recordCheckout(checkout());
  const out = await runStripeEvent(paidSession(c));
  expect(out.kind).toBe("payment_updated");
  return c;
}

async function notice(c) {
  const comp = await compensationOf(c);
  return queuedEmail(`booking_not_confirmed:${comp.compensation_id}`);
}

describe("compensation, automatic refunds", () => {
  it("paid checkout + booking.book_error: one refund under one key, one honest notice, no confirmation, one owner alert, every step recorded", async () => {
    const c = await paid();
    const out = await runLiteapiEvent(bookErrorBody(c));
    expect(out.kind).toBe("booking_failed");
    expect(out.failed).toEqual([]);

    const posts = await refundPosts(c.pi);
    expect(posts).toHaveLength(1);
    const comp = await compensationOf(c);
    expect(posts[0].key).toBe(`${comp.compensation_id}-refund-r1`);
    expect(posts[0].params).toMatchObject({ payment_intent: c.pi, reason: "requested_by_customer", "metadata[compensation_id]": comp.compensation_id });
    expect(posts[0].params.amount).toBe("54000"); // everything captured (no supplier fee), named: never a full refund by omission
    expect(comp.steps.refund.payment_intent).toBe(c.pi); // proven at Stripe before the refund

    expect(comp.cause).toBe("supplier_failed");
    expect(comp.state).toBe("refunded");
    expect(comp.reason).toBe("Room is no longer available at the hotel");
    expect(comp.order).toEqual(["close_booking", "withdraw_emails", "refund", "guest_notice", "owner_alert"]);
    expect(comp.steps.close_booking.status).toBe("skipped");
    expect(comp.steps.withdraw_emails.status).toBe("skipped");
    expect(comp.steps.refund).toMatchObject({ status: "done", provider_status: "succeeded", amount_minor: 54000, currency: "EUR", attempts: 1, round: 1 });
    expect(comp.steps.refund.provider_id).toMatch(/^re_fake_/);
    expect(comp.steps.guest_notice.status).toBe("done");
    expect(comp.steps.owner_alert.status).toBe("done");

    const guest = await notice(c);
    expect(guest.to).toBe(c.email);
    expect(guest.subject).toBe("We could not confirm your booking");
    expect(guest.text).toContain("Your payment of €540.00 has been refunded");
    expect(guest.text).not.toMatch(/confirmed|liteapi|comp-/i);
    const owner = await queuedEmail(`owner_compensation:${comp.compensation_id}`);
    expect(owner.to).toBe("owner@example.com");
    expect(owner.text).toContain("Refund: refunded (EUR 540.00)");
    expect(owner.text).toContain("Nothing is waiting for you");
    expect(await emailsLike(`booking_confirmation:${c.bookingId}`)).toEqual([]);
    expect(await emailsLike(`owner_compensation:${comp.compensation_id}`)).toHaveLength(1);
    // The notice carries no booking intent: the closed booking never holds it back.
    await sendThrough(`booking_not_confirmed:${comp.compensation_id}`);
    expect(await emailsLike(`booking_not_confirmed:${comp.compensation_id}`)).toEqual([
      { dedupe_key: `booking_not_confirmed:${comp.compensation_id}`, status: "sent" },
    ]);
  });

  it("the same failure delivered twice, and again under another event id: one refund, one notice", async () => {
    const c = await paid();
    const first = bookErrorBody(c);
    await runLiteapiEvent(first);
    const again = await postLiteapi(first.body);
    expect(again.status).toBe(200); // a duplicate delivery starts nothing
    const out = await runLiteapiEvent(bookErrorBody(c)); // the supplier re-sent it with a new id
    expect(out.emails.map(([k, d]) => d)).toEqual(["already_claimed", "already_claimed"]);
    expect(await refundPosts(c.pi)).toHaveLength(1);
    const comp = await compensationOf(c);
    expect(comp.steps.refund.attempts).toBe(1);
    expect(await emailsLike(`booking_not_confirmed:${comp.compensation_id}`)).toHaveLength(1);
    expect(await emailsLike(`owner_compensation:${comp.compensation_id}`)).toHaveLength(1);
  });

  it("the failure before the payment record: the journey waits for it, then one refund and one notice with the refund wording", async () => {
    const c = await recordCheckout(checkout());
    const failure = bookErrorBody(c);
    const failed = runLiteapiEvent(failure); // sleeps COMPENSATION_PAYMENT_WAIT_MS (4 s) for the payment
    await new Promise((r) => setTimeout(r, 500));
    await runStripeEvent(paidSession(c));
    const out = await failed;
    expect(out.failed).toEqual([]);
    expect(await refundPosts(c.pi)).toHaveLength(1);
    const guest = await notice(c);
    expect(guest.text).toContain("has been refunded");
    expect((await compensationOf(c)).state).toBe("refunded");
  });

  it("an expired earlier session does not read as \u201cnot charged\u201d: the journey still waits for the session the guest paid with", async () => {
    const c = await recordCheckout(checkout());
    const expired = paidSession({ ...c, pi: `${c.pi}_old` }, { id: unique("evt_exp_") });
    expired.type = "checkout.session.expired";
    expired.data.object.payment_status = "unpaid";
    await runStripeEvent(expired);
    const failed = runLiteapiEvent(bookErrorBody(c));
    await new Promise((r) => setTimeout(r, 500));
    await runStripeEvent(paidSession(c));
    await failed;
    expect(await refundPosts(c.pi)).toHaveLength(1);
    expect((await notice(c)).text).toContain("has been refunded");
    expect((await notice(c)).text).not.toContain("not been charged");
  });

  it("a payment that arrives after the wait still resumes the refund: one refund, the notice never claimed one", async () => {
    const c = await recordCheckout(checkout());
    const out = await runLiteapiEvent(bookErrorBody(c)); // waits 4 s, finds nothing
    expect(out.failed).toEqual([]);
    let comp = await compensationOf(c);
    expect(comp.steps.refund.status).toBe("waiting_payment");
    expect(comp.steps.refund.detail).toMatch(/no captured payment is known/);
    const guest = await notice(c);
    expect(guest.text).toContain("If any payment was taken for this booking, it will be refunded in full");
    expect(guest.text).not.toMatch(/has been refunded|is being refunded/);
    expect(await refundPosts(c.pi)).toHaveLength(0);

    const paidOut = await runStripeEvent(paidSession(c));
    expect(paidOut.emails.map(([k]) => k)).toEqual([`owner_compensation:${comp.compensation_id}:payment`]);
    expect(await refundPosts(c.pi)).toHaveLength(1);
    comp = await compensationOf(c);
    expect(comp.steps.refund.status).toBe("done");
    expect(await emailsLike(`booking_not_confirmed:${comp.compensation_id}`)).toHaveLength(1);
  });

  it("the failure before the booking event: the late booking is recorded FAILED and confirms nothing", async () => {
    const c = await paid();
    await runLiteapiEvent(bookErrorBody(c));
    const out = await runLiteapiEvent(bookedBody(c));
    expect(out.kind).toBe("hotel_booked");
    expect(out.emails).toEqual([]);
    expect(out.skipped[0][0]).toBe("booking_confirmation");
    expect(out.skipped[0][1]).toMatch(/^compensated \(comp-/);
    expect(await rows("SELECT status FROM bookings WHERE booking_id = ?", c.bookingId)).toEqual([{ status: "FAILED" }]);
    expect(await emailsLike(`booking_confirmation:${c.bookingId}`)).toEqual([]);
    expect(await rows("SELECT COUNT(*) AS n FROM scheduled_sends WHERE booking_id = ?", c.bookingId)).toEqual([{ n: 0 }]);
    expect((await compensationOf(c)).booking_id).toBe(c.bookingId);
    expect(await refundPosts(c.pi)).toHaveLength(1);
  });

  it("the supplier fails after the confirmation went out: the notice is a cancellation, the refund is made, later emails stop", async () => {
    const c = await paid();
    await bookCheckout(c);
    await sendThrough(`booking_confirmation:${c.bookingId}`);
    expect(await emailsLike(`booking_confirmation:${c.bookingId}`)).toEqual([{ dedupe_key: `booking_confirmation:${c.bookingId}`, status: "sent" }]);

    await runLiteapiEvent(bookErrorBody(c));
    const comp = await compensationOf(c);
    expect(comp.steps.close_booking.status).toBe("done");
    expect(comp.steps.withdraw_emails.detail).toMatch(/confirmation had already been sent/);
    expect(await rows("SELECT status FROM bookings WHERE booking_id = ?", c.bookingId)).toEqual([{ status: "FAILED" }]);
    const guest = await notice(c);
    expect(guest.subject).toBe("Your booking has been cancelled");
    expect(guest.text).toContain("has been cancelled");
    expect(guest.text).toContain("has been refunded");
    expect(await refundPosts(c.pi)).toHaveLength(1);
    // Every planned send of the booking now skips at its turn (the booking is closed).
    const planned = await rows("SELECT status FROM scheduled_sends WHERE booking_id = ? AND status = 'planned'", c.bookingId);
    expect(planned.length).toBeGreaterThan(0);
    expect(await rows("SELECT journey_version FROM bookings WHERE booking_id = ?", c.bookingId)).toEqual([{ journey_version: 2 }]);
  });

  it("the refund API fails with 500, then succeeds: one refund, two requests under the same key", async () => {
    const c = await paid();
    await failStripe(c.pi, ["500"]);
    const out = await runLiteapiEvent(bookErrorBody(c));
    expect(out.failed).toEqual([]);
    const posts = await refundPosts(c.pi);
    expect(posts.map((p) => p.status)).toEqual([500, 200]);
    expect(new Set(posts.map((p) => p.key)).size).toBe(1);
    const comp = await compensationOf(c);
    expect(comp.steps.refund).toMatchObject({ status: "done", attempts: 2, error: null });
    expect(comp.state).toBe("refunded");
  });

  it("a lost answer (the refund was made, the connection dropped): the retry gets Stripe's saved refund, never a second one", async () => {
    const c = await paid();
    await failStripe(c.pi, ["drop"]);
    await runLiteapiEvent(bookErrorBody(c));
    // The first answer was lost (-1); the retry looks at the payment's refunds first, finds the
    // one Stripe made, and records it without a second request.
    const requests = await stripeRequests(c.pi);
    expect(requests.map((r) => [r.method, r.status])).toEqual([["POST", -1], ["GET", 200]]);
    const comp = await compensationOf(c);
    expect(comp.steps.refund).toMatchObject({ status: "done", attempts: 2 });
    expect(comp.steps.refund.provider_id).toMatch(/^re_fake_/);
    expect(comp.state).toBe("refunded");
  });

  it("a permanent refusal (expired card): the owner gets working links; the POST refunds once in a new round, a second POST does nothing", async () => {
    const c = await paid();
    await failStripe(c.pi, ["expired_card"]);
    await runLiteapiEvent(bookErrorBody(c));
    let comp = await compensationOf(c);
    expect(comp.steps.refund).toMatchObject({ status: "failed", round: 1 });
    expect(comp.steps.refund.error).toMatch(/402.*expired/);
    const guest = await notice(c);
    expect(guest.text).toContain("We are arranging your refund");
    const owner = await queuedEmail(`owner_compensation:${comp.compensation_id}`);
    const links = refundLinks(owner.text);
    expect(links.now).toMatch(/^https:\/\/engine\.test\/actions\//);

    const page = await getLink(links.now);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(comp.compensation_id);
    expect(html).toContain("Refund now");
    expect(await refundPosts(c.pi)).toHaveLength(1); // GET changed nothing

    const acted = await postLink(links.now);
    expect(acted.status, await acted.clone().text()).toBe(200);
    const requests = await stripeRequests(c.pi);
    // Round 2: the existing refunds are listed first, then one POST under a new key.
    expect(requests.map((r) => r.method)).toEqual(["POST", "GET", "POST"]);
    expect(requests[2].key).toBe(`${comp.compensation_id}-refund-r2`);
    comp = await compensationOf(c);
    expect(comp.steps.refund).toMatchObject({ status: "done", round: 2 });
    expect(comp.state).toBe("refunded");

    const twice = await postLink(links.now);
    expect(twice.status).toBe(410);
    const handled = await postLink(links.handled);
    expect(handled.status).toBe(409);
    expect(await refundPosts(c.pi)).toHaveLength(2);
  });

  it("a new round whose look at Stripe's refunds fails makes no refund request; the link works again", async () => {
    const c = await paid();
    await failStripe(c.pi, ["expired_card"]);
    await runLiteapiEvent(bookErrorBody(c));
    const comp = await compensationOf(c);
    const links = refundLinks((await queuedEmail(`owner_compensation:${comp.compensation_id}`)).text);
    await failStripe(c.pi, ["list500"]);
    const first = await postLink(links.now);
    expect(first.status).toBe(503);
    expect((await stripeRequests(c.pi)).map((r) => [r.method, r.status])).toEqual([["POST", 402], ["GET", 500]]);
    expect((await compensationOf(c)).steps.refund).toMatchObject({ status: "failed", round: 1 });
    const second = await postLink(links.now);
    expect(second.status, await second.clone().text()).toBe(200);
    const posts = await refundPosts(c.pi);
    expect(posts.map((p) => [p.key, p.status])).toEqual([
      [`${comp.compensation_id}-refund-r1`, 402],
      [`${comp.compensation_id}-refund-r2`, 200],
    ]);
  });

  it("Stripe says the charge was already refunded: recorded as done, not as an error", async () => {
    const c = await paid();
    await failStripe(c.pi, ["charge_already_refunded"]);
    await runLiteapiEvent(bookErrorBody(c));
    const comp = await compensationOf(c);
    expect(comp.steps.refund).toMatchObject({ status: "done", error: null });
    expect(comp.steps.refund.detail).toMatch(/already refunded/);
    expect(comp.state).toBe("refunded");
  });

  it("an unknown payment: the emails still go, the refund step says why it could not act", async () => {
    const c = checkout();
    await runLiteapiEvent(bookErrorBody(c));
    const comp = await compensationOf(c);
    expect(comp.state).toBe("payment_unknown");
    expect(comp.steps.refund.status).toBe("waiting_payment");
    const owner = await queuedEmail(`owner_compensation:${comp.compensation_id}`);
    expect(owner.text).toContain("no payment known yet");
    expect(await notice(c)).not.toBeNull();
    expect(await stripeRequests(c.pi)).toEqual([]);
  });

  // A refund goes only to a payment whose Stripe session names the client reference of a
  // checkout or booking recorded for the failing supplier before the failure: here nothing of
  // Duffel's records the reference (the failure's own metadata only names it), so the engine
  // refunds nothing, not even on the owner's click, and says why.
  it("Duffel order.creation_failed opens the compensation by its client reference; no Duffel checkout or booking recorded it before the failure, so the engine refunds nothing and the owner gets \u201calready handled\u201d only", async () => {
    const c = checkout();
    await runStripeEvent(paidSession(c));
    const body = structuredClone(duffelFailed);
    delete body._modeled_on;
    body.id = unique("wev_fail_");
    body.data.object.metadata = { client_reference: c.reference, payment_intent: c.pi };
    body.data.object.passengers[0].email = c.email;
    const raw = JSON.stringify(body);
    const out = await runJourney(`e-duffel-x-${body.id}`, () => postDuffel(raw));
    expect(out.kind).toBe("booking_failed");
    expect(await refundPosts(c.pi)).toHaveLength(0);
    const comp = await compensationOf(c);
    expect(comp.source).toBe("duffel");
    expect(comp.reason).toBe("The airline could not confirm the fare");
    expect(comp.steps.refund.status).toBe("awaiting_owner");
    expect(comp.steps.refund.payment_intent).toBeNull();
    expect(comp.steps.refund.detail).toMatch(/^not refunded by the engine: Stripe's record does not tie this payment to this compensation/);
    expect(comp.steps.refund.proof).toContain(`names client_reference_id ${c.reference} of payment intent ${c.pi}: none of this compensation's client references (none recorded for its owner before the failure)`);
    expect((await notice(c)).to).toBe(c.email);
    const owner = await queuedEmail(`owner_compensation:${comp.compensation_id}`);
    const links = refundLinks(owner.text);
    expect(links.now).toBeUndefined();
    expect((await postLink(links.handled)).status).toBe(200);
    expect((await compensationOf(c)).state).toBe("handled");
    expect(await refundPosts(c.pi)).toHaveLength(0);
  });

  it("a late failure of an earlier card attempt never turns a captured payment into \u201cnot charged\u201d", async () => {
    const c = await paid();
    const declined = stripeEvent("payment_intent.payment_failed", { id: c.pi, object: "payment_intent", amount: 54000, amount_received: 0, currency: "eur", last_payment_error: { code: "card_declined", decline_code: "insufficient_funds" } }, { id: unique("evt_pf_") });
    await runStripeEvent(declined);
    expect(await rows("SELECT outcome, amount_minor FROM payments WHERE payment_key = ?", c.pi)).toEqual([{ outcome: "paid", amount_minor: 54000 }]);
    await runLiteapiEvent(bookErrorBody(c));
    expect(await refundPosts(c.pi)).toHaveLength(1);
    expect((await notice(c)).text).not.toContain("not been charged");
  });

  it("a supplier cancellation of a paid, confirmed booking: the refund waits for the owner whatever the policy (who cancelled is unknown), then refunds what the supplier says is refundable", async () => {
    const c = await paid();
    await bookCheckout(c);
    const out = await runLiteapiEvent(cancelledWithCharges(c, { fee: 40.5, refund: 499.5 }));
    expect(out.kind).toBe("booking_cancelled");
    expect(await refundPosts(c.pi)).toHaveLength(0);
    const comp = await compensationOf(c);
    expect(comp.cause).toBe("booking_cancelled");
    expect(comp.steps.refund).toMatchObject({ status: "awaiting_owner", amount_minor: 49950 });
    expect(comp.steps.refund.detail).toMatch(/does not say who cancelled/);
    expect(comp.steps.guest_notice.status).toBe("skipped");
    const owner = await queuedEmail(`owner_compensation:${comp.compensation_id}`);
    expect(owner.text).toContain("Paid booking cancelled by the supplier");
    const acted = await postLink(refundLinks(owner.text).now);
    expect(acted.status, await acted.clone().text()).toBe(200);
    const posts = await refundPosts(c.pi);
    expect(posts).toHaveLength(1);
    expect(posts[0].params.amount).toBe("49950");
    expect(await emailsLike(`booking_cancelled:${c.bookingId}`)).toHaveLength(1);
  });
});

