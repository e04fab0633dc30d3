// Payload builders shared by the tests inside workerd (tests/e2e*, through helpers.mjs and
// compensation-helpers.mjs) and the browser test in Node (tests/browser): plain data and
// WebCrypto only (no `cloudflare:test`, no Node built-ins), so one builder serves both. Each
// returns what a supplier or Stripe sends, in the shape of the fixture named on it
// (tests/fixtures/), with the ids a test passes or fresh ones.

let counter = 0;
/** A unique suffix per call, so tests never collide on event ids, booking ids or addresses. */
export function unique(prefix) {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter}`;
}

/** `YYYY-MM-DD` of today + `days` (UTC). */
export function dateInDays(days, from = Date.now()) {
  return new Date(from + days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * A Stripe event (https://docs.stripe.com/api/events/object) of `type` around `object`, test
 * mode, created now (Unix seconds), as tests/fixtures/stripe-*.json are.
 */
export function stripeEvent(type, object, { id = unique("evt_") } = {}) {
  return { id, object: "event", type, created: Math.floor(Date.now() / 1000), livemode: false, data: { object } };
}

/**
 * Stripe `checkout.session.completed`, paid, EUR 540.00, of checkout `c` (`{reference, pi, email}`):
 * session `cs_<pi>` whose `client_reference_id` is the checkout's reference.
 */
export function paidSession(c, { id = unique("evt_paid_"), name = "Testa Guestington" } = {}) {
  return stripeEvent(
    "checkout.session.completed",
    {
      id: `cs_${c.pi}`,
      object: "checkout.session",
      payment_status: "paid",
      amount_total: 54000,
      currency: "eur",
      client_reference_id: c.reference,
      payment_intent: c.pi,
      customer_details: { email: c.email, name },
    },
    { id },
  );
}

/**
 * A liteAPI `booking.prebook` delivery (tests/fixtures/liteapi-booking-prebook.json: `request` and
 * `response` are JSON text) of one checkout attempt: the guest in `request.holder`, the client
 * reference, the payment's id as `transactionId`. Returns `{eventId, prebookId, reference, body}`,
 * `body` the text to post.
 */
export function liteapiPrebook({
  email,
  first = "Testa",
  last = "Guestington",
  eventId = unique("evt_pb_"),
  prebookId = unique("PB_"),
  reference = unique("trip_"),
  transactionId = unique("tr_"),
  hotelId = "lp_fake_1001",
  checkin = dateInDays(30),
  checkout = dateInDays(33),
} = {}) {
  const body = JSON.stringify({
    event_id: eventId,
    event_name: "booking.prebook",
    sandbox: false,
    request: JSON.stringify({ offerId: "OFFER", usePaymentSdk: true, clientReference: reference, holder: { firstName: first, lastName: last, email } }),
    response: JSON.stringify({ data: { prebookId, hotelId, checkin, checkout, currency: "EUR", price: 540, transactionId } }),
  });
  return { eventId, prebookId, reference, body };
}

/**
 * liteAPI's `booking.book_error` of checkout `c` (`{prebookId, reference, email, pi}`) from
 * `fixture` (the parsed tests/fixtures/liteapi-booking-book-error.json), naming `c.pi` as the
 * payment. Returns `{eventId, body}`, `body` the text to post.
 */
export function liteapiBookError(fixture, c, { eventId = unique("evt_err_"), message = "Room is no longer available at the hotel" } = {}) {
  const envelope = structuredClone(fixture);
  delete envelope._modeled_on;
  envelope.event_id = eventId;
  const request = JSON.parse(envelope.request);
  Object.assign(request, { prebookId: c.prebookId, clientReference: c.reference });
  request.holder.email = c.email;
  request.guests[0].email = c.email;
  request.payment.transactionId = c.pi;
  envelope.request = JSON.stringify(request);
  envelope.response = JSON.stringify({ error: { code: 2013, message } });
  return { eventId, body: JSON.stringify(envelope) };
}

/**
 * A generic partner's `hotel_booked` (docs/suppliers.md, "The generic source") of a stay 30 to 33 days ahead
 * in Madrid's time zone for `email`; `extra` adds or overrides fields of `data` (a client
 * reference, a prebook id).
 */
export function partnerHotelBooked(bookingId, { email = `${bookingId.toLowerCase()}@example.com`, amount = "300.00", ...extra } = {}) {
  return {
    type: "hotel_booked",
    data: {
      booking_id: bookingId,
      status: "CONFIRMED",
      hotel_id: null,
      hotel_name: "Partner Harbour Hotel",
      checkin: dateInDays(30),
      checkout: dateInDays(33),
      rooms: [{ room_name: "Double", board_name: null, adults: 2, children: 0 }],
      holder: { name: { first_name: "Pat", last_name: "Partner" }, email, phone: null },
      guests: [],
      total: { amount, currency: "EUR" },
      hotel_confirmation_number: null,
      sandbox: false,
      location: { time_zone: "Europe/Madrid" },
      ...extra,
    },
  };
}

/** Lower-case RFC 4648 base32 without padding (https://www.rfc-editor.org/rfc/rfc4648#section-6). */
export function base32(bytes) {
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  let bits = 0;
  let value = 0;
  let out = "";
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

const enc = new TextEncoder();
const sha256 = async (text) => new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(text)));

/**
 * A guest's reply address as the engine signs it (its reply-token module documents the format),
 * rebuilt here so a test can make one the engine never issued (an expired one): version 1, the
 * issue hour (`issuedMs` / 3,600,000, big-endian u32), SHA-256(dedupe key)[0..8],
 * SHA-256(booking id)[0..4], then HMAC-SHA-256(`key`, "reply-address\n" + those 17 bytes)[0..10],
 * all base32 as `reply+<token>@<domain>`.
 */
export async function replyAddress(dedupeKey, bookingId, issuedMs, { key, domain }) {
  const signed = new Uint8Array(17);
  signed[0] = 1;
  new DataView(signed.buffer).setUint32(1, Math.floor(issuedMs / 3_600_000));
  signed.set((await sha256(dedupeKey)).slice(0, 8), 5);
  signed.set((await sha256(bookingId)).slice(0, 4), 13);
  const hmacKey = await crypto.subtle.importKey("raw", enc.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", hmacKey, new Uint8Array([...enc.encode("reply-address\n"), ...signed])));
  return `reply+${base32(new Uint8Array([...signed, ...mac.slice(0, 10)]))}@${domain}`;
}
