// Helpers for the compensation tests: one paid checkout's ids, the supplier's
// failure and booking events, Stripe's payment and refund events (signed), the fake Stripe API's
// record, and the compensation's D1 rows. Used by tests/e2e (owner policy, the default) and
// tests/e2e-automatic (COMPENSATION_REFUND_POLICY = automatic).
import { env, introspectWorkflowInstance, SELF } from "cloudflare:test";
import { expect } from "vitest";
import bookError from "../fixtures/liteapi-booking-book-error.json";
import confirmed from "../fixtures/liteapi-booking-confirmed.json";
import { PARTNERS, dateInDays, eventually, handedOver, instanceIdFor, liteapiEvent, postLiteapi, queuedEmail, rows, runGenericAs, submitActionForm, unique } from "./helpers.mjs";
import { liteapiBookError, liteapiPrebook, paidSession, partnerHotelBooked, stripeEvent } from "./payloads.mjs";

export { paidSession, queuedEmail };

/** The ids of one paid checkout: prebook, client reference, Stripe payment intent, guest. */
export function checkout() {
  const n = unique("");
  return {
    prebookId: `PB_${n}`,
    reference: `trip_${n}`,
    pi: `pi_${n}`,
    email: `guest${n}@example.com`,
    bookingId: `BK_${n}`,
  };
}

/**
 * The checkout as liteAPI reports it first (`booking.prebook` with the transaction id and client
 * reference): its attempt is recorded as liteAPI's, which is what lets a liteAPI failure refund the
 * payment automatically (a payment no checkout or booking of the failing source records waits for
 * the owner). The prebook's own journey then waits its 20 minutes; this returns once the attempt
 * is stored.
 */
export async function recordCheckout(c) {
  const { body } = liteapiPrebook({ prebookId: c.prebookId, reference: c.reference, email: c.email, transactionId: c.pi });
  const r = await postLiteapi(body);
  expect(r.status, await r.clone().text()).toBe(202);
  for (let i = 0; i < 400; i++) {
    if ((await rows("SELECT 1 FROM checkout_attempts WHERE prebook_id = ?", c.prebookId)).length) return c;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the prebook of ${c.prebookId} was not recorded`);
}

/**
 * Partner acme's own `hotel_booked` paid by checkout `c`: booking `bookingId` (the checkout's by
 * default) under the checkout's client reference and guest, EUR 540.00, 30 days ahead.
 */
export function acmeStay(c, bookingId = c.bookingId) {
  return partnerHotelBooked(bookingId, { email: c.email, amount: "540.00", client_reference: c.reference });
}

/**
 * Partner acme's failure naming a victim's payment: a liteAPI checkout (the victim) is paid through
 * Stripe; acme books its own stay for checkout `a` and sends its own Checkout Session, edited by
 * `ownSession` (its `data.object`), then reports the booking failed with `transaction_id` = the
 * victim's payment intent and `booking_id` = `bookingId(victim, a)`. Returns the victim's and acme's
 * checkouts and acme's compensation.
 */
export async function acmeFailsNamingVictim({ ownSession, bookingId }) {
  const victim = await recordCheckout(checkout());
  await runStripeEvent(paidSession(victim));
  const a = checkout();
  await runGenericAs("acme", PARTNERS.acme[0], acmeStay(a));
  const own = paidSession(a);
  ownSession(own.data.object);
  await runStripeEvent(own);
  const failed = await runGenericAs("acme", PARTNERS.acme[0], {
    type: "booking_failed",
    data: { booking_kind: "hotel", booking_id: bookingId(victim, a), client_reference: a.reference, transaction_id: victim.pi, reason: "Overbooked" },
  });
  expect(failed.output.failed).toEqual([]);
  return { victim, a, comp: await compensationOf(a) };
}

/** A Checkout Session edit: it charges nothing (no payment intent, EUR 0). */
export function chargesNothing(session) {
  Object.assign(session, { payment_intent: null, payment_status: "no_payment_required", amount_total: 0 });
}

/**
 * A paid and booked checkout (EUR 540.00 on Stripe's record) whose Checkout Session a holder of the
 * Stripe endpoint secret then re-sends with a forged `amount_total` (minor units), which Stripe's
 * own record never holds. Returns the checkout.
 */
export async function bookedThenAmountForged(amountTotal) {
  const c = await recordCheckout(checkout());
  await runStripeEvent(paidSession(c));
  await bookCheckout(c);
  const forged = paidSession(c, { id: unique("evt_forged_") });
  forged.data.object.amount_total = amountTotal;
  await runStripeEvent(forged, { recordAtStripe: false });
  return c;
}

/**
 * liteAPI's `booking.cancel` of checkout `c`, `CANCELLED_WITH_CHARGES`: `fee` and `refund` in EUR
 * (units, not minor; no `refund_amount` when `refund` is undefined). `{eventId, body}`.
 */
export function cancelledWithCharges(c, { fee, refund }) {
  const data = { bookingId: c.bookingId, status: "CANCELLED_WITH_CHARGES", cancellation_fee: fee, refund_amount: refund, currency: "EUR" };
  return liteapiEvent("booking.cancel", data, { eventId: unique("evt_cx_") });
}

/**
 * Posts checkout `c`'s liteAPI `booking.book` and waits until its confirmation is handed over and
 * the journey has planned its later sends (so the instance can be let go).
 */
export async function bookCheckout(c) {
  const booked = bookedBody(c);
  const instance = await introspectWorkflowInstance(env.JOURNEY, `e-liteapi-x-${booked.eventId}`);
  try {
    expect((await postLiteapi(booked.body)).status).toBe(202);
    await handedOver(c.bookingId);
    await eventually(async () => expect((await rows("SELECT 1 FROM scheduled_sends WHERE booking_id = ?", c.bookingId)).length).toBeGreaterThan(0), { ms: 30_000 });
  } finally {
    await instance.dispose();
  }
}

/** A liteAPI `booking.book_error` for the checkout (fixture shape, its ids): `{eventId, body}`. */
export function bookErrorBody(c, options) {
  return liteapiBookError(bookError, c, options);
}

/** A liteAPI `booking.book` of the checkout (its prebook id and client reference), 30 days ahead. */
export function bookedBody(c, { eventId = unique("evt_bk_") } = {}) {
  const envelope = structuredClone(confirmed);
  delete envelope._modeled_on;
  envelope.event_id = eventId;
  const response = JSON.parse(envelope.response);
  Object.assign(response.data, {
    bookingId: c.bookingId,
    prebookId: c.prebookId,
    clientReference: c.reference,
    checkin: dateInDays(30),
    checkout: dateInDays(33),
  });
  response.data.holder.email = c.email;
  envelope.response = JSON.stringify(response);
  return { eventId, body: JSON.stringify(envelope) };
}

/** Stripe `refund.updated` for a refund of the checkout's payment. */
export function refundUpdated(c, refundId, status, { id = unique("evt_ref_"), failure_reason } = {}) {
  return stripeEvent("refund.updated", { id: refundId, object: "refund", amount: 54000, currency: "eur", payment_intent: c.pi, status, failure_reason }, { id });
}

/**
 * Posts a Stripe event signed with `secret` at time `t` (Unix seconds) over `body`; `sent` is the
 * body actually sent (to forge one). A `checkout.session.completed` is first put on Stripe's own
 * record (the fake's `/__payments`: the session and its payment intent), as Stripe holds every
 * payment it tells us about; `recordAtStripe: false` sends a claim Stripe never made (a holder of
 * the endpoint secret forging one).
 */
export async function postStripe(event, { secret = "whsec_test_stripe_secret", t = Math.floor(Date.now() / 1000), body = JSON.stringify(event), sent = body, recordAtStripe = true } = {}) {
  if (recordAtStripe && event.type === "checkout.session.completed") await stripeRecords(event.data.object);
  const enc = new TextEncoder();
  const k = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(`${t}.${body}`)));
  const hex = [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
  return SELF.fetch("https://engine.test/webhooks/stripe", {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": `t=${t},v1=${hex}` },
    body: sent,
  });
}

/**
 * Posts a delivery with `post()` and waits for the journey `instanceId` to complete; returns its
 * output. `disableSleeps` for journeys whose sleeps the test does not wait out.
 */
export async function runJourney(instanceId, post, { disableSleeps = false } = {}) {
  const instance = await introspectWorkflowInstance(env.JOURNEY, instanceId);
  try {
    if (disableSleeps) await instance.modify(async (m) => m.disableSleeps());
    const r = await post();
    expect(r.status, await r.clone().text()).toBe(202);
    await instance.waitForStatus("complete");
    return await instance.getOutput();
  } finally {
    await instance.dispose();
  }
}

/** Posts a liteAPI body and waits for its journey. */
export function runLiteapiEvent({ eventId, body }, options) {
  return runJourney(instanceIdFor(eventId), () => postLiteapi(body), options);
}

/** Posts a Stripe event and waits for its journey (`recordAtStripe` as in `postStripe`). */
export function runStripeEvent(event, { recordAtStripe = true, ...options } = {}) {
  return runJourney(`e-stripe-x-${event.id}`, () => postStripe(event, { recordAtStripe }), options);
}

/** Puts a Checkout Session (and its payment intent) on the fake Stripe's own record. */
export async function stripeRecords(session) {
  const r = await fetch(`${env.STRIPE_FAKE_API}/__payments`, { method: "POST", body: JSON.stringify(session) });
  expect(r.status).toBe(200);
}

/** Every look-up of `pi` the fake Stripe answered (the intent, its sessions): `{path, status}`. */
export async function stripeLookups(pi) {
  const r = await fetch(`${env.STRIPE_FAKE_API}/__lookups?payment_intent=${encodeURIComponent(pi)}`);
  return r.json();
}

/** Every request the fake Stripe received about `pi`, in order: `{method, key, params, status}`. */
export async function stripeRequests(pi) {
  const r = await fetch(`${env.STRIPE_FAKE_API}/__requests?payment_intent=${encodeURIComponent(pi)}`);
  return r.json();
}

/** The POSTs to /v1/refunds about `pi`. */
export async function refundPosts(pi) {
  return (await stripeRequests(pi)).filter((r) => r.method === "POST");
}

/** Makes the fake Stripe answer the next requests about `pi` with `plan` (see fake-stripe.mjs). */
export async function failStripe(pi, plan) {
  const r = await fetch(`${env.STRIPE_FAKE_API}/__fail`, { method: "POST", body: JSON.stringify({ payment_intent: pi, plan }) });
  expect(r.status).toBe(200);
}

/** Moves a refund's status in the fake Stripe (as the bank's answer would). */
export async function setRefundStatus(id, status) {
  const r = await fetch(`${env.STRIPE_FAKE_API}/__refund_status`, { method: "POST", body: JSON.stringify({ id, status }) });
  expect(r.status).toBe(200);
}

/** The compensation of a checkout (by client reference) and its steps `{step: {status, …}}`. */
export async function compensationOf(c) {
  const [row] = await rows("SELECT * FROM compensations WHERE client_reference = ?", c.reference);
  if (!row) return null;
  const steps = await rows("SELECT * FROM compensation_steps WHERE compensation_id = ? ORDER BY position", row.compensation_id);
  return { ...row, steps: Object.fromEntries(steps.map((s) => [s.step, s])), order: steps.map((s) => s.step) };
}

/**
 * A paid checkout the supplier then failed; returns its ids, compensation and owner links. Its
 * prebook is recorded first (liteAPI's `booking.prebook`): a refund goes only to a payment whose
 * Stripe session names a checkout or booking recorded for the failing supplier before the failure.
 */
export async function failedAfterPayment() {
  const c = await recordCheckout(checkout());
  await runStripeEvent(paidSession(c));
  const out = await runLiteapiEvent(bookErrorBody(c));
  expect(out.failed).toEqual([]);
  const comp = await compensationOf(c);
  const owner = await queuedEmail(`owner_compensation:${comp.compensation_id}`);
  return { c, comp, owner, links: refundLinks(owner.text) };
}

/** D1 email rows whose key starts with `prefix`. */
export async function emailsLike(prefix) {
  // D1 refuses LIKE patterns over 50 bytes: compare the prefix instead.
  return rows("SELECT dedupe_key, status FROM emails WHERE substr(dedupe_key, 1, length(?1)) = ?1 ORDER BY dedupe_key", prefix);
}

/** The signed one-click links in an owner alert's text: `{refund_now, already_handled}` paths. */
export function refundLinks(text) {
  const now = /Refund now \(through Stripe\): (\S+)/.exec(text)?.[1];
  const handled = /Already handled \(refund nothing\): (\S+)/.exec(text)?.[1];
  return { now, handled };
}

/** GET an action link through the Worker. */
export async function getLink(url) {
  return SELF.fetch(url);
}
/** The owner's click: the link's confirmation page, then its own form's POST (with its nonce). */
export async function postLink(url) {
  return submitActionForm(url);
}
