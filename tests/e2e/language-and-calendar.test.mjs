// The guest's language, the guest's calendar and the reservation markup, inside workerd:
// - a Stripe Checkout Session's locale reaches the booking paid through it, stays and flights
//   alike, and every journey email after it; a partner's language hint in any shape (both
//   fields, a non-string, an Accept-Language list with q-weights, an array) is answered 202 and
//   read; the region it names writes the dates and money exactly as Node's `Intl` does (asked of
//   the Node that runs the tests, tests/e2e/global-setup.mjs `/_test/intl`);
// - a stay through confirmation → hotel confirmation number → amendment → cancellation, and a
//   flight order whose schedule change re-sorts, adds and removes a segment: every calendar part
//   read by both ical.js and node-ical (`/_test/parse`), one UID per part that follows the stay
//   or the flight (not its position, not the sending domain), SEQUENCE and DTSTAMP strictly
//   rising per UID, METHOD and ORGANIZER, and the removed flight cancelled;
// - the reservation markup of each booking email kind (LodgingReservation, FlightReservation;
//   modifiedTime on changes, Cancelled on cancellations) and its absence when a property Gmail
//   requires is unknown.
// (Every calendar part and markup block of every e2e run, this file's included, is also checked
// after each test file by tests/e2e/calendars-parse.mjs, wherever it was sent.)
import { env, introspectWorkflowInstance } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import ICAL from "ical.js";
import orderCreated from "../fixtures/duffel-order-created.json";
import { bookedBody, checkout, paidSession, runLiteapiEvent, runStripeEvent } from "./compensation-helpers.mjs";
import { adminCookie, adminPage, liteapiEvent, postDuffel, postGeneric, rows, runGeneric, runLiteapi, sendThrough, unique } from "./helpers.mjs";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ORGANIZER = "mailto:bookings@example.com";

/** Every message the send_email binding got for `to`: `{subject, text, html, attachments}`. */
async function sent(to) {
  return env.EMAIL.messages(to);
}

/** The one message to `to` whose subject is `subject`. */
async function sentWith(to, subject) {
  const found = (await sent(to)).filter((m) => m.subject === subject);
  expect(found, `${to}: ${subject}`).toHaveLength(1);
  return found[0];
}

async function deliver(keys) {
  for (const key of keys) await sendThrough(key);
}

/**
 * The calendar parts of a message, each parsed with ical.js and read by node-ical too (the Node
 * check server): `{method, file, raw, event, uid, sequence, dtstamp, node}`. Each part is one
 * VCALENDAR with one VEVENT whose METHOD matches the MIME type's, folded at 75 octets.
 */
async function partsOf(message) {
  const parts = message.attachments.filter((a) => a.type.startsWith("text/calendar"));
  const out = [];
  for (const part of parts) {
    const method = /method=([A-Z]+)/.exec(part.type)?.[1];
    const comp = new ICAL.Component(ICAL.parse(part.content));
    expect(comp.getFirstPropertyValue("method")).toBe(method);
    for (const line of part.content.split("\r\n")) expect(new TextEncoder().encode(line).length).toBeLessThanOrEqual(75);
    const vevents = comp.getAllSubcomponents("vevent");
    expect(vevents, `${message.subject}: one event per part`).toHaveLength(1);
    const node = await bothRead(part.content);
    const [a] = node.icaljs.events;
    const [b] = node.nodeical.events;
    // Both parsers read the same UID, SEQUENCE, METHOD, ORGANIZER, DTSTAMP, start and end.
    expect(b, `node-ical reads ${part.filename}`).toBeTruthy();
    for (const key of ["uid", "sequence", "dtstamp", "start", "end", "organizer", "status"]) expect(b[key], `${part.filename} ${key}`).toEqual(a[key]);
    expect(String(node.nodeical.method).toUpperCase()).toBe(method);
    expect(a.organizer).toBe(ORGANIZER);
    if (method === "PUBLISH") expect(a.attendees).toEqual([]);
    out.push({ method, file: part.filename, raw: part.content, event: new ICAL.Event(vevents[0]), vevent: vevents[0], ...a });
  }
  return out;
}

/** What ical.js and node-ical read of one .ics (tests/e2e/calendar-check.mjs `readBoth`, in Node). */
async function bothRead(ics) {
  const r = await fetch(`${env.CALENDAR_CHECK_API}/_test/parse`, { method: "POST", body: JSON.stringify({ ics }) });
  expect(r.status).toBe(200);
  return r.json();
}

/** What Node's Intl writes for `query` (`{locale, amount, currency}`, `{locale, date}`). */
async function intl(query) {
  const r = await fetch(`${env.CALENDAR_CHECK_API}/_test/intl?${new URLSearchParams(query)}`);
  expect(r.status, JSON.stringify(query)).toBe(200);
  return (await r.json()).text;
}

/** The reservation markup of a message's HTML part: each JSON-LD block, parsed. */
function markupOf(message) {
  return [...message.html.matchAll(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/g)].map((m) => JSON.parse(m[1]));
}

async function runDuffel(event) {
  const instance = await introspectWorkflowInstance(env.JOURNEY, `e-duffel-x-${event.id}`);
  try {
    await instance.modify(async (m) => { await m.disableSleeps(); await m.disableRetryDelays(); });
    const r = await postDuffel(JSON.stringify(event));
    expect(r.status, await r.clone().text()).toBe(202);
    await instance.waitForStatus("complete");
    return await instance.getOutput();
  } finally {
    await instance.dispose();
  }
}

function day(offset) {
  return new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
}

/** A hotel location with every property Gmail's markup requires (Lisbon, WEST in summer). */
const LISBON = {
  time_zone: "Europe/Lisbon",
  address: "Rua Exemplo 1, Lisboa",
  street_address: "Rua Exemplo 1",
  locality: "Lisboa",
  region: "Lisboa",
  postal_code: "1100-001",
  country: "PT",
  telephone: "+351 210 000 000",
  checkin_time: "15:00",
  checkout_time: "11:00",
};

function genericBooking({ hints = {}, hotelName = "Generic Harbour Hotel", email = `${unique("gen")}@example.com`, bookingId = unique("gen_bk_"), total = { amount: "1234.50", currency: "EUR" }, location = { time_zone: "Europe/Lisbon", address: "Rua Exemplo 1, Lisboa" }, checkin = day(25), checkout = day(28) } = {}) {
  return {
    bookingId,
    email,
    checkin,
    payload: {
      type: "hotel_booked",
      timestamp: new Date().toISOString(),
      data: {
        booking_id: bookingId,
        status: "CONFIRMED",
        hotel_id: null,
        hotel_name: hotelName,
        checkin,
        checkout,
        rooms: [{ room_name: "Double", board_name: "BB", adults: 2, children: 0 }],
        holder: { name: { first_name: "Gena", last_name: "Rick" }, email, phone: null },
        guests: [],
        total,
        hotel_confirmation_number: "HCN-777",
        sandbox: false,
        location,
        ...hints,
      },
    },
  };
}

/** The strictly rising order of each UID's SEQUENCE and DTSTAMP across `parts` (in send order). */
function expectRising(parts) {
  for (let i = 1; i < parts.length; i++) {
    expect(parts[i].sequence, `${parts[i].file} SEQUENCE after ${parts[i - 1].file}`).toBeGreaterThan(parts[i - 1].sequence);
    expect(parts[i].dtstamp, `${parts[i].file} DTSTAMP`).toBeGreaterThan(parts[i - 1].dtstamp);
  }
}

describe("a stay's calendar and markup, confirmation to cancellation", () => {
  it("one UID (a UUID of the booking, no domain) through confirmation → hotel number → amendment → cancellation, SEQUENCE and DTSTAMP rising, METHOD and ORGANIZER read by both parsers; a LodgingReservation in every email", async () => {
    const g = genericBooking({ location: LISBON, checkin: "2027-07-10", checkout: "2027-07-13" });
    g.payload.data.hotel_confirmation_number = null;
    await runGeneric(g.payload);
    await deliver([`booking_confirmation:${g.bookingId}`]);
    const confirmation = await sentWith(g.email, "Your stay at Generic Harbour Hotel is confirmed");
    const [stay] = await partsOf(confirmation);
    expect(stay.method).toBe("PUBLISH");
    expect(stay.file).toBe("stay.ics");
    expect(stay.uid).toMatch(UUID);
    expect(stay.sequence).toBe(0);
    expect(stay.start).toBe("date:2027-07-10");
    expect(stay.vevent.getFirstPropertyValue("transp")).toBe("TRANSPARENT");
    expect(confirmation.text.trim().endsWith("The attached calendar file adds this booking to your calendar. Our later emails update it, and a cancellation removes it.")).toBe(true);
    const [lodging] = markupOf(confirmation);
    expect(lodging).toMatchObject({
      "@type": "LodgingReservation",
      reservationNumber: g.bookingId,
      reservationStatus: "http://schema.org/Confirmed",
      underName: { name: "Gena Rick" },
      reservationFor: { name: "Generic Harbour Hotel", telephone: "+351 210 000 000", address: { streetAddress: "Rua Exemplo 1", addressCountry: "PT" } },
      // The hotel's check-in and check-out times with Lisbon's summer offset.
      checkinDate: "2027-07-10T15:00:00+01:00",
      checkoutDate: "2027-07-13T11:00:00+01:00",
    });
    expect(lodging.modifiedTime).toBeUndefined();

    await runGeneric({ type: "hotel_confirmation_number", data: { booking_id: g.bookingId, hotel_confirmation_number: "HCN-PT-1" } });
    await deliver([`hotel_confirmation_number:${g.bookingId}:HCN-PT-1`]);
    const numberMail = await sentWith(g.email, "Your confirmation number from Generic Harbour Hotel");
    const [numbered] = await partsOf(numberMail);
    expect(numbered.uid).toBe(stay.uid);
    expect(numbered.event.description).toContain("Hotel confirmation number: HCN-PT-1");
    expect(markupOf(numberMail)[0].modifiedTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    await runGeneric({ type: "hotel_amended", data: { booking_id: g.bookingId, checkout: "2027-07-14" } });
    const [{ dedupe_key: updatedKey }] = await rows("SELECT dedupe_key FROM emails WHERE booking_id = ? AND kind = 'booking_updated'", g.bookingId);
    await deliver([updatedKey]);
    const updated = await sentWith(g.email, "Your booking at Generic Harbour Hotel was updated");
    const [moved] = await partsOf(updated);
    expect(moved.uid).toBe(stay.uid);
    expect(moved.end).toBe("date:2027-07-14");
    expect(markupOf(updated)[0]).toMatchObject({ checkoutDate: "2027-07-14T11:00:00+01:00", reservationStatus: "http://schema.org/Confirmed" });
    expect(markupOf(updated)[0].modifiedTime).toBeTruthy();

    await runGeneric({ type: "booking_cancelled", data: { booking_id: g.bookingId, with_charges: false, cancellation_fee: null, refund: null } });
    await deliver([`booking_cancelled:${g.bookingId}`]);
    const cancelled = await sentWith(g.email, `Your booking ${g.bookingId} is cancelled`);
    const [off] = await partsOf(cancelled);
    expect(off.method).toBe("CANCEL");
    expect(off.uid).toBe(stay.uid);
    expect(off.status).toBe("CANCELLED");
    expect(off.attendees).toEqual([{ value: `mailto:${g.email}`, rsvp: null }]);
    expect(cancelled.text.trim().endsWith("The attached calendar file removes the cancelled booking from your calendar.")).toBe(true);
    expect(markupOf(cancelled)[0]).toMatchObject({ reservationNumber: g.bookingId, reservationStatus: "http://schema.org/Cancelled" });

    // Four emails, one UID: SEQUENCE 0, 1, 2, 3 and a later DTSTAMP each time.
    expectRising([stay, numbered, moved, off]);
    expect([stay, numbered, moved, off].map((p) => p.sequence)).toEqual([0, 1, 2, 3]);
    // The stamps are the engine's record: one row per UID and email.
    expect((await rows("SELECT sequence, method FROM calendar_stamps WHERE uid = ? ORDER BY sequence", stay.uid)).map((r) => [r.sequence, r.method])).toEqual([
      [0, "PUBLISH"], [1, "PUBLISH"], [2, "PUBLISH"], [3, "CANCEL"],
    ]);
  }, 180_000);

  it("no markup when a property Gmail requires is unknown (no telephone; no address parts), the calendar part still goes", async () => {
    const { telephone, ...noPhone } = LISBON;
    const a = genericBooking({ location: noPhone });
    const b = genericBooking({ location: { time_zone: "Europe/Lisbon" } });
    await runGeneric(a.payload);
    await runGeneric(b.payload);
    await deliver([`booking_confirmation:${a.bookingId}`, `booking_confirmation:${b.bookingId}`]);
    for (const x of [a, b]) {
      const mail = await sentWith(x.email, "Your stay at Generic Harbour Hotel is confirmed");
      expect(markupOf(mail)).toEqual([]);
      expect(mail.html).not.toContain("application/ld+json");
      expect(await partsOf(mail)).toHaveLength(1);
    }
  }, 90_000);
});

describe("the guest's language", () => {
  it("a Stripe checkout in Spanish, then the booking: confirmation and every journey email in Spanish, the calendar note in Spanish, the number's subject naming the hotel once", async () => {
    const c = checkout();
    const session = paidSession(c);
    session.data.object.locale = "es";
    await runStripeEvent(session);
    const booked = await runLiteapiEvent(bookedBody(c), { disableSleeps: true });
    expect(booked.failed ?? []).toEqual([]);
    expect(await rows("SELECT guest_locale, guest_locale_source FROM bookings WHERE booking_id = ?", c.bookingId)).toEqual([
      { guest_locale: "es", guest_locale_source: "stripe_checkout" },
    ]);
    const keys = (await rows("SELECT dedupe_key FROM emails WHERE booking_id = ? AND audience = 'client' ORDER BY id", c.bookingId)).map((r) => r.dedupe_key);
    expect(keys.map((k) => k.split(":")[0])).toEqual(["booking_confirmation", "arrival_guide", "checkin_day", "thank_you"]);
    await deliver(keys);
    const subjects = [
      "Tu estancia en Example Harbour Hotel está confirmada",
      "Tu estancia en Example Harbour Hotel empieza en 3 días",
      "Hoy: entrada en Example Harbour Hotel",
      "Gracias por alojarte en Example Harbour Hotel",
    ];
    expect((await sent(c.email)).map((m) => m.subject).sort()).toEqual([...subjects].sort());
    const messages = await Promise.all(subjects.map((s) => sentWith(c.email, s)));
    for (const m of messages) expect(m.text).toMatch(/^Hola, Testa:/);
    expect(messages[0].text).toContain("540,00\u00a0€");
    expect(messages[0].text).toContain("El archivo de calendario adjunto añade esta reserva a tu calendario.");
    const [stay] = await partsOf(messages[0]);
    expect(stay.event.description).toContain(`ID de reserva: ${c.bookingId}`);
    // The scheduled emails carry no calendar part.
    for (const m of messages.slice(1)) expect(m.attachments).toEqual([]);
    // A liteAPI booking gives no hotel address parts or telephone: no markup.
    expect(markupOf(messages[0])).toEqual([]);

    const hcnEvent = liteapiEvent("booking.book.hotelConfirmationNumber", { bookingId: c.bookingId, status: "CONFIRMED", hotelConfirmationCode: "HCN-ES-4821" });
    await runLiteapi(hcnEvent);
    await deliver([`hotel_confirmation_number:${c.bookingId}:HCN-ES-4821`]);
    const numberMail = await sentWith(c.email, "Tu número de confirmación de Example Harbour Hotel");
    const [numbered] = await partsOf(numberMail);
    expect(numbered.uid).toBe(stay.uid);
    expect(numbered.sequence).toBeGreaterThan(stay.sequence);
    expect(numbered.event.description).toContain("Número de confirmación del hotel: HCN-ES-4821");
  }, 120_000);

  it("every shape of a partner's language hint is answered 202 and read; the region writes dates and money exactly as Node's Intl does", async () => {
    const cases = [
      // [hints, the stored formats, the language's subject, currency]
      [{ locale: "pt-PT", language: "es" }, "pt-PT", "Sua estadia no Generic Harbour Hotel está confirmada", "EUR"],
      [{ locale: 42, language: "de-CH" }, "de-CH", "Ihr Aufenthalt im Generic Harbour Hotel ist bestätigt", "CHF"],
      [{ locale: { tag: "fr" } }, "en", "Your stay at Generic Harbour Hotel is confirmed", "EUR"],
      [{ locale: "ja, es-MX;q=0.9, en;q=0.5" }, "es-MX", "Tu estancia en Generic Harbour Hotel está confirmada", "MXN"],
      [{ language: "EN;Q=0.1, fr-CA;Q=0.8" }, "fr-CA", "Votre séjour à Generic Harbour Hotel est confirmé", "CAD"],
      [{ locale: ["it-CH", "en"] }, "it-CH", "Il tuo soggiorno presso Generic Harbour Hotel è confermato", "CHF"],
      [{ locale: "es-AR" }, "es-AR", "Tu estancia en Generic Harbour Hotel está confirmada", "ARS"],
      [{ language: "en-US" }, "en-US", "Your stay at Generic Harbour Hotel is confirmed", "USD"],
    ];
    for (const [hints, formats, subject, currency] of cases) {
      const g = genericBooking({ hints, total: { amount: "1234.50", currency } });
      // runGeneric asserts the 202.
      await runGeneric(g.payload);
      expect(await rows("SELECT guest_locale FROM bookings WHERE booking_id = ?", g.bookingId), JSON.stringify(hints)).toEqual([{ guest_locale: formats }]);
      await deliver([`booking_confirmation:${g.bookingId}`]);
      const mail = await sentWith(g.email, subject);
      const locale = formats === "en" ? "en-GB" : formats;
      const money = await intl({ locale, amount: "1234.5", currency });
      const checkin = await intl({ locale, date: g.checkin });
      expect(mail.text, `${formats}: ${money}`).toContain(money);
      expect(mail.text, `${formats}: ${checkin}`).toContain(checkin);
    }
  }, 240_000);

  it("a flight paid through a Stripe checkout in French is written in French, as a stay is", async () => {
    const c = checkout();
    const session = paidSession(c);
    session.data.object.locale = "fr";
    await runStripeEvent(session);
    const order = unique("ord_");
    const e = structuredClone(orderCreated);
    delete e._modeled_on;
    e.id = unique("wev_");
    e.data.object.id = order;
    e.data.object.metadata = { client_reference: c.reference };
    await runDuffel(e);
    expect(await rows("SELECT guest_locale, guest_locale_source FROM bookings WHERE booking_id = ?", order)).toEqual([
      { guest_locale: "fr", guest_locale_source: "stripe_checkout" },
    ]);
    const [{ contact_email: to }] = await rows("SELECT contact_email FROM bookings WHERE booking_id = ?", order);
    await deliver([`flight_confirmation:${order}`]);
    const mail = (await sent(to)).find((m) => m.subject.startsWith("Votre vol"));
    expect(mail, "the flight confirmation in French").toBeTruthy();
    expect(mail.text).toMatch(/^Bonjour Testa,/);
  }, 90_000);

  it("a pt-BR generic booking is written in Portuguese; an unknown language gets the default (English)", async () => {
    const pt = genericBooking({ hints: { locale: "pt-BR" } });
    await runGeneric(pt.payload);
    const unknown = genericBooking({ hints: { locale: "tlh" } });
    await runGeneric(unknown.payload);
    expect(await rows("SELECT guest_locale, guest_locale_source FROM bookings WHERE booking_id IN (?, ?) ORDER BY booking_id = ?", pt.bookingId, unknown.bookingId, unknown.bookingId)).toEqual([
      { guest_locale: "pt", guest_locale_source: "event" },
      { guest_locale: "en", guest_locale_source: "default" },
    ]);
    await deliver([`booking_confirmation:${pt.bookingId}`, `booking_confirmation:${unknown.bookingId}`]);
    const ptMail = await sentWith(pt.email, "Sua estadia no Generic Harbour Hotel está confirmada");
    expect(ptMail.text).toContain("Olá, Gena,");
    expect(ptMail.text).toContain("€\u00a01.234,50");
    expect(ptMail.text).toContain("Café da manhã incluído");
    const [ptStay] = await partsOf(ptMail);
    expect(ptStay.event.location).toBe("Generic Harbour Hotel, Rua Exemplo 1, Lisboa");
    expect(ptStay.event.description).toContain("Número de confirmação do hotel: HCN-777");
    const enMail = await sentWith(unknown.email, "Your stay at Generic Harbour Hotel is confirmed");
    expect(enMail.text).toContain("€1,234.50");
    expect((await partsOf(enMail))[0].uid).toMatch(UUID);
  }, 90_000);

  it("a hostile hotel name (2,000 characters of commas, semicolons and newlines) still makes a calendar that both parsers read", async () => {
    let name = "";
    while (name.length < 2000) name += "Hotel, \"Harbour\"; Spa\r\nBEGIN:VEVENT\nUID:evil@x; ";
    name = name.slice(0, 2000);
    const g = genericBooking({ hints: { locale: "fr" }, hotelName: name });
    await runGeneric(g.payload);
    await deliver([`booking_confirmation:${g.bookingId}`]);
    const mail = (await sent(g.email)).find((m) => m.attachments.length > 0);
    expect(mail.subject.startsWith("Votre séjour à Hotel")).toBe(true);
    const parts = await partsOf(mail);
    expect(parts).toHaveLength(1);
    const [{ event, uid }] = parts;
    expect(uid).toMatch(UUID);
    expect(event.summary.startsWith('Hotel, "Harbour"; Spa BEGIN:VEVENT UID:evil@x;')).toBe(true);
    expect(event.summary).not.toMatch(/[\r\n]/);
    expect(event.startDate.toString()).toBe(day(25));
  }, 60_000);
});

describe("an explicit change of the guest's language", () => {
  it("an amendment stating a new language switches the booking's language, and the admin timeline shows the change", async () => {
    const g = genericBooking({ hints: { locale: "pt-BR" } });
    await runGeneric(g.payload);
    await runGeneric({ type: "hotel_amended", timestamp: new Date().toISOString(), data: { booking_id: g.bookingId, locale: "de" } });
    const [row] = await rows("SELECT guest_locale, guest_locale_source, guest_locale_before, guest_locale_changed_at_ms FROM bookings WHERE booking_id = ?", g.bookingId);
    expect(row).toMatchObject({ guest_locale: "de", guest_locale_source: "event", guest_locale_before: "pt" });
    expect(row.guest_locale_changed_at_ms).toBeGreaterThan(Date.now() - 600_000);
    // The same language stated again changes nothing: the change on record stays the first.
    await runGeneric({ type: "hotel_amended", timestamp: new Date().toISOString(), data: { booking_id: g.bookingId, language: "de" } });
    const [again] = await rows("SELECT guest_locale_before, guest_locale_changed_at_ms FROM bookings WHERE booking_id = ?", g.bookingId);
    expect(again).toEqual({ guest_locale_before: "pt", guest_locale_changed_at_ms: row.guest_locale_changed_at_ms });
    const html = await adminPage(`/admin/booking?id=${encodeURIComponent(g.bookingId)}`, await adminCookie());
    expect(html).toContain("guest language changed from pt to de");
    expect(html).toContain("guest language de (from event)");
  }, 60_000);
});

describe("a hostile booking id", () => {
  it("a booking id with commas, semicolons, a backslash and a colon gives a UUID that both parsers read, the same in every email", async () => {
    const bookingId = `${unique("gen_bk_")},x;y\\z:1 é`;
    const g = genericBooking({ hints: { locale: "en" }, bookingId });
    await runGeneric(g.payload);
    await deliver([`booking_confirmation:${bookingId}`]);
    const mail = await sentWith(g.email, "Your stay at Generic Harbour Hotel is confirmed");
    const parts = await partsOf(mail);
    expect(parts).toHaveLength(1);
    expect(parts[0].uid).toMatch(UUID);
    // The id itself still reads as given in DESCRIPTION (TEXT, escaped).
    expect(parts[0].event.description).toContain(`Booking ID: ${bookingId}`);
  }, 60_000);
});

/** A Duffel slice of one segment: `flight` (`ZZ 0472`), `from`/`to` airports, local times. */
function slice(base, { number, from, to, departing, arriving }) {
  const s = structuredClone(base);
  const seg = s.segments[0];
  seg.id = unique("seg_");
  seg.marketing_carrier_flight_number = number;
  seg.operating_carrier_flight_number = number;
  seg.origin = { ...seg.origin, ...from };
  seg.destination = { ...seg.destination, ...to };
  seg.departing_at = departing;
  seg.arriving_at = arriving;
  s.origin = seg.origin;
  s.destination = seg.destination;
  s.id = unique("sli_");
  return s;
}

describe("the traveller's calendar", () => {
  it("a schedule change that re-sorts, adds and removes a segment: the moved flight keeps its UID, the new one gets its own, the removed one is cancelled; both parsers agree; FlightReservation markup with modifiedTime", async () => {
    const order = unique("ord_");
    const e = structuredClone(orderCreated);
    delete e._modeled_on;
    e.id = unique("wev_");
    e.data.object.id = order;
    const base = e.data.object.slices[0];
    const LHR = { iata_code: "LHR", name: "Heathrow Airport", time_zone: "Europe/London", city_name: "London" };
    const BCN = { iata_code: "BCN", name: "Barcelona-El Prat Airport", time_zone: "Europe/Madrid", city_name: "Barcelona" };
    const MAD = { iata_code: "MAD", name: "Madrid-Barajas Airport", time_zone: "Europe/Madrid", city_name: "Madrid" };
    // Before: A (ZZ 0472 LHR → BCN, 12 June) and B (ZZ 0473 BCN → LHR, 20 June).
    const A = slice(base, { number: "0472", from: LHR, to: BCN, departing: "2026-06-12T07:15:00", arriving: "2026-06-12T10:25:00" });
    const B = slice(base, { number: "0473", from: BCN, to: LHR, departing: "2026-06-20T18:05:00", arriving: "2026-06-20T19:25:00" });
    e.data.object.slices = [A, B];
    await runDuffel(e);
    const [{ contact_email: to }] = await rows("SELECT contact_email FROM bookings WHERE booking_id = ?", order);
    await deliver([`flight_confirmation:${order}`]);
    const confirmation = (await sent(to)).find((m) => m.subject.startsWith("Your flight"));
    const before = await partsOf(confirmation);
    expect(before.map((p) => [p.method, p.file, p.sequence])).toEqual([
      ["PUBLISH", "flight-1-LHR-BCN.ics", 0],
      ["PUBLISH", "flight-2-BCN-LHR.ics", 0],
    ]);
    const [uidA, uidB] = before.map((p) => p.uid);
    for (const p of before) expect(p.uid).toMatch(UUID);
    // 07:15 at LHR in June is BST (UTC+1); 10:25 at BCN is CEST (UTC+2): both ends in UTC.
    expect(before[0].start).toBe(`utc:${Date.parse("2026-06-12T06:15:00Z")}`);
    expect(before[0].end).toBe(`utc:${Date.parse("2026-06-12T08:25:00Z")}`);
    expect(confirmation.text).toContain("The attached calendar files add each flight to your calendar.");
    const flights = markupOf(confirmation)[0];
    expect(flights).toHaveLength(2);
    expect(flights[0]).toMatchObject({
      "@type": "FlightReservation",
      reservationNumber: "FAKE12",
      reservationStatus: "http://schema.org/Confirmed",
      reservationFor: { flightNumber: "472", airline: { name: "Example Air", iataCode: "ZZ" }, departureTime: "2026-06-12T07:15:00+01:00", arrivalTime: "2026-06-12T10:25:00+02:00" },
    });

    // The airline's change: A moves two and a half hours later; a new flight N (ZZ 0100 MAD →
    // LHR, 10 June) comes first; B is gone. Positions change: N is now the first segment.
    const A2 = slice(base, { number: "0472", from: LHR, to: BCN, departing: "2026-06-12T09:45:00", arriving: "2026-06-12T12:55:00" });
    const N = slice(base, { number: "0100", from: MAD, to: LHR, departing: "2026-06-10T08:00:00", arriving: "2026-06-10T09:25:00" });
    const changeId = unique("aic_");
    const registered = await fetch(`${env.DUFFEL_API_BASE_URL}/_test/aic?order_id=${encodeURIComponent(order)}`, {
      method: "POST",
      body: JSON.stringify({ data: [{ id: changeId, order_id: order, removed: [A, B], added: [N, A2] }] }),
    });
    expect(registered.status).toBe(200);
    const detected = { id: unique("wev_"), type: "order.airline_initiated_change_detected", api_version: "v2", live_mode: false, created_at: new Date().toISOString(), data: { object: { id: order, aic_id: changeId } } };
    await runDuffel(detected);
    await deliver([`flight_changed:${order}:${changeId}`]);
    const changed = await sentWith(to, "Important: your flight schedule changed");
    const after = await partsOf(changed);
    const byUid = Object.fromEntries(after.map((p) => [p.uid, p]));
    expect(after).toHaveLength(3);
    // A moved: the same UID, PUBLISH, a higher SEQUENCE and DTSTAMP, the new time.
    expect(byUid[uidA]).toMatchObject({ method: "PUBLISH", sequence: 1, start: `utc:${Date.parse("2026-06-12T08:45:00Z")}` });
    expect(byUid[uidA].dtstamp).toBeGreaterThan(before[0].dtstamp);
    // B removed: its own CANCEL under its UID.
    expect(byUid[uidB]).toMatchObject({ method: "CANCEL", sequence: 1, status: "CANCELLED", file: "cancelled-flight-2-BCN-LHR.ics" });
    expect(byUid[uidB].attendees.map((a) => a.value)).toEqual([`mailto:${to}`]);
    // N added: a UID of its own (never A's or B's, though it took position 1), SEQUENCE 0.
    const added = after.find((p) => ![uidA, uidB].includes(p.uid));
    expect(added).toMatchObject({ method: "PUBLISH", sequence: 0, file: "flight-1-MAD-LHR.ics" });
    expect(added.uid).toMatch(UUID);
    expect(changed.text).toContain("The attached calendar files update your flights in your calendar and remove the flights that no longer exist.");
    const now = markupOf(changed)[0];
    expect(now.map((r) => r.reservationFor.flightNumber)).toEqual(["100", "472"]);
    for (const r of now) expect(r.modifiedTime).toMatch(/Z$/);

    // The order is cancelled: a CANCEL of each flight it still has, above every PUBLISH.
    await runDuffel({
      id: unique("wev_"),
      type: "order_cancellation.confirmed",
      api_version: "v2",
      live_mode: false,
      created_at: new Date().toISOString(),
      data: { object: { id: unique("ore_"), order_id: order, refund_amount: "212.40", refund_currency: "GBP", confirmed_at: new Date().toISOString() } },
    });
    await deliver([`booking_cancelled:${order}`]);
    const cancelled = await sentWith(to, `Your booking ${order} is cancelled`);
    const off = await partsOf(cancelled);
    expect(off.map((p) => [p.uid, p.method]).sort()).toEqual([[added.uid, "CANCEL"], [uidA, "CANCEL"]].sort());
    expect(off.find((p) => p.uid === uidA).sequence).toBe(2);
    expect(off.find((p) => p.uid === added.uid).sequence).toBe(1);
    expect(markupOf(cancelled)[0].every((r) => r.reservationStatus === "http://schema.org/Cancelled")).toBe(true);
  }, 180_000);
});
