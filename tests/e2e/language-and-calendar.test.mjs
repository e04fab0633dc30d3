// The guest's language and the guest's calendar, inside workerd: a Stripe Checkout Session's
// locale reaches the booking paid through it and every journey email after; a generic booking's
// `locale` (pt-BR) does too; an unknown one falls back to DEFAULT_GUEST_LOCALE (en). The .ics
// parts of this file's emails are parsed here with ical.js (Mozilla's RFC 5545 parser, the one
// Thunderbird uses) and round-trip UID, SEQUENCE, DTSTART/DTEND; the hotel's confirmation number
// arriving later re-sends the stay with a higher SEQUENCE and the number; an amendment raises
// SEQUENCE, a cancellation is METHOD:CANCEL with the same UID, a hostile hotel name and a hostile
// booking id still parse; an amendment stating a new language switches the booking's language
// and the admin timeline shows the change. (Every calendar part of every e2e run, this file's
// included, is also parsed after each test file by tests/e2e/calendars-parse.mjs, wherever it
// was sent.)
import { env, introspectWorkflowInstance } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import ICAL from "ical.js";
import orderCreated from "../fixtures/duffel-order-created.json";
import aicEvent from "../fixtures/duffel-order-airline-initiated-change.json";
import { bookedBody, checkout, paidSession, runLiteapiEvent, runStripeEvent } from "./compensation-helpers.mjs";
import { adminCookie, adminPage, liteapiEvent, postDuffel, postGeneric, rows, runLiteapi, sendThrough, unique } from "./helpers.mjs";

/** Every message the send_email binding got for `to`: `{subject, text, attachments}`. */
async function sent(to) {
  return env.EMAIL.messages(to);
}

/** The one message to `to` whose subject is `subject`. */
async function sentWith(to, subject) {
  const found = (await sent(to)).filter((m) => m.subject === subject);
  expect(found, `${to}: ${subject}`).toHaveLength(1);
  return found[0];
}

/** Sends every queued email of `to` whose key starts with one of `keys`, then returns them. */
async function deliver(keys) {
  for (const key of keys) await sendThrough(key);
}

/** The one calendar attachment of a message, parsed with ical.js; checks the part's envelope. */
function calendarOf(message) {
  const parts = message.attachments.filter((a) => a.type.startsWith("text/calendar"));
  expect(parts, message.subject).toHaveLength(1);
  const [part] = parts;
  expect(part.filename).toBe("invite.ics");
  const method = /method=([A-Z]+)/.exec(part.type)?.[1];
  const comp = new ICAL.Component(ICAL.parse(part.content));
  expect(comp.getFirstPropertyValue("method")).toBe(method);
  for (const line of part.content.split("\r\n")) expect(new TextEncoder().encode(line).length).toBeLessThanOrEqual(75);
  const events = comp.getAllSubcomponents("vevent").map((v) => new ICAL.Event(v));
  return { method, comp, events, raw: part.content };
}

async function runGeneric(payload) {
  const id = unique("msg_");
  const instance = await introspectWorkflowInstance(env.JOURNEY, `e-generic-x-${id}`);
  try {
    await instance.modify(async (m) => { await m.disableSleeps(); await m.disableRetryDelays(); });
    const { response } = await postGeneric(JSON.stringify(payload), { id });
    expect(response.status, await response.clone().text()).toBe(202);
    await instance.waitForStatus("complete");
    return await instance.getOutput();
  } finally {
    await instance.dispose();
  }
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

function genericBooking({ locale, hotelName = "Generic Harbour Hotel", email = `${unique("gen")}@example.com`, bookingId = unique("gen_bk_") }) {
  return {
    bookingId,
    email,
    payload: {
      type: "hotel_booked",
      timestamp: new Date().toISOString(),
      data: {
        booking_id: bookingId,
        status: "CONFIRMED",
        hotel_id: null,
        hotel_name: hotelName,
        checkin: day(25),
        checkout: day(28),
        rooms: [{ room_name: "Double", board_name: null, adults: 2, children: 0 }],
        holder: { name: { first_name: "Gena", last_name: "Rick" }, email, phone: null },
        guests: [],
        total: { amount: "1234.50", currency: "EUR" },
        hotel_confirmation_number: "HCN-777",
        sandbox: false,
        location: { time_zone: "Europe/Lisbon", address: "Rua Exemplo 1, Lisboa" },
        ...(locale === undefined ? {} : { locale }),
      },
    },
  };
}

describe("the guest's language", () => {
  it("a Stripe checkout in Spanish, then the booking: confirmation and every journey email in Spanish, with one calendar event that follows the changes", async () => {
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
    // Sent by rank (the check-in day note is urgent), so compared as a set.
    expect((await sent(c.email)).map((m) => m.subject).sort()).toEqual([...subjects].sort());
    const messages = await Promise.all(subjects.map((s) => sentWith(c.email, s)));
    for (const m of messages) expect(m.text).toMatch(/^Hola, Testa:/);
    expect(messages[0].text).toContain("540,00\u00a0€");

    // The confirmation's calendar: one all-day stay, SEQUENCE 0.
    const confirmation = calendarOf(messages[0]);
    expect(confirmation.method).toBe("PUBLISH");
    expect(confirmation.events).toHaveLength(1);
    const stay = confirmation.events[0];
    const uid = stay.uid;
    expect(uid).toBe(`stay-${c.bookingId}@example.com`);
    expect(stay.sequence).toBe(0);
    expect(stay.startDate.isDate).toBe(true);
    expect(stay.startDate.toString()).toBe(day(30));
    expect(stay.endDate.toString()).toBe(day(33));
    expect(stay.description).toContain(`ID de reserva: ${c.bookingId}`);
    // The scheduled emails carry no calendar part.
    for (const m of messages.slice(1)) expect(m.attachments).toEqual([]);

    // The hotel's confirmation number arrives after the confirmation: its email carries the stay
    // event again, the same UID with a higher SEQUENCE and the number in DESCRIPTION.
    const hcnEvent = liteapiEvent("booking.book.hotelConfirmationNumber", { bookingId: c.bookingId, status: "CONFIRMED", hotelConfirmationCode: "HCN-ES-4821" });
    const hcnRun = await runLiteapi(hcnEvent);
    expect(hcnRun.emails).toEqual([[`hotel_confirmation_number:${c.bookingId}:HCN-ES-4821`, "enqueued"]]);
    await deliver([`hotel_confirmation_number:${c.bookingId}:HCN-ES-4821`]);
    const numberMail = await sentWith(c.email, "Tu número de confirmación del hotel Example Harbour Hotel");
    const withNumber = calendarOf(numberMail);
    expect(withNumber.method).toBe("PUBLISH");
    expect(withNumber.events).toHaveLength(1);
    const numbered = withNumber.events[0];
    expect(numbered.uid).toBe(uid);
    expect(numbered.sequence).toBeGreaterThan(stay.sequence);
    expect(numbered.description).toContain("Número de confirmación del hotel: HCN-ES-4821");
    expect(stay.description).not.toContain("HCN-ES-4821");
    expect(numbered.startDate.toString()).toBe(day(30));

    // An amendment: the same UID with a higher SEQUENCE and the new dates, in Spanish.
    const amend = liteapiEvent("booking.amendment", { bookingId: c.bookingId, checkin: day(40), checkout: day(42) });
    const amended = await runLiteapi(amend);
    const updatedKey = amended.emails.map(([k]) => k).find((k) => k.startsWith("booking_updated:"));
    await deliver([updatedKey]);
    const updated = await sentWith(c.email, "Tu reserva en Example Harbour Hotel se ha actualizado");
    const moved = calendarOf(updated).events[0];
    expect(moved.uid).toBe(uid);
    expect(moved.sequence).toBeGreaterThan(numbered.sequence);
    expect(moved.description).toContain("HCN-ES-4821");
    expect(moved.startDate.toString()).toBe(day(40));
    expect(moved.endDate.toString()).toBe(day(42));

    // A cancellation: METHOD:CANCEL, the same UID, a higher SEQUENCE still.
    const cancel = liteapiEvent("booking.cancel", { bookingId: c.bookingId, status: "CANCELLED" });
    await runLiteapi(cancel);
    await deliver([`booking_cancelled:${c.bookingId}`]);
    const cancelled = await sentWith(c.email, `Tu reserva ${c.bookingId} está cancelada`);
    const off = calendarOf(cancelled);
    expect(off.method).toBe("CANCEL");
    expect(off.events[0].uid).toBe(uid);
    expect(off.events[0].sequence).toBeGreaterThan(moved.sequence);
    expect(off.comp.getFirstSubcomponent("vevent").getFirstPropertyValue("status")).toBe("CANCELLED");
  }, 120_000);

  it("a pt-BR generic booking is written in Portuguese; an unknown language gets the default (English)", async () => {
    const pt = genericBooking({ locale: "pt-BR" });
    await runGeneric(pt.payload);
    const unknown = genericBooking({ locale: "tlh" });
    await runGeneric(unknown.payload);
    expect(await rows("SELECT guest_locale, guest_locale_source FROM bookings WHERE booking_id IN (?, ?) ORDER BY booking_id = ?", pt.bookingId, unknown.bookingId, unknown.bookingId)).toEqual([
      { guest_locale: "pt", guest_locale_source: "event" },
      { guest_locale: "en", guest_locale_source: "default" },
    ]);
    await deliver([`booking_confirmation:${pt.bookingId}`, `booking_confirmation:${unknown.bookingId}`]);
    const ptMail = await sentWith(pt.email, "Sua estadia no Generic Harbour Hotel está confirmada");
    expect(ptMail.text).toContain("Olá, Gena,");
    expect(ptMail.text).toContain("€\u00a01.234,50");
    const ptStay = calendarOf(ptMail).events[0];
    expect(ptStay.location).toBe("Generic Harbour Hotel, Rua Exemplo 1, Lisboa");
    expect(ptStay.description).toContain("Número de confirmação do hotel: HCN-777");
    const enMail = await sentWith(unknown.email, "Your stay at Generic Harbour Hotel is confirmed");
    expect(enMail.text).toContain("€1,234.50");
    expect(calendarOf(enMail).events[0].uid).toBe(`stay-${unknown.bookingId}@example.com`);
  }, 90_000);

  it("a hostile hotel name (2,000 characters of commas, semicolons and newlines) still makes a calendar that parses", async () => {
    let name = "";
    while (name.length < 2000) name += "Hotel, \"Harbour\"; Spa\r\nBEGIN:VEVENT\nUID:evil@x; ";
    name = name.slice(0, 2000);
    const g = genericBooking({ locale: "fr", hotelName: name });
    await runGeneric(g.payload);
    await deliver([`booking_confirmation:${g.bookingId}`]);
    const mail = (await sent(g.email)).find((m) => m.attachments.length > 0);
    expect(mail.subject.startsWith("Votre séjour à Hotel")).toBe(true);
    const cal = calendarOf(mail);
    expect(cal.events).toHaveLength(1);
    const [event] = cal.events;
    expect(event.uid).toBe(`stay-${g.bookingId}@example.com`);
    expect(event.summary.startsWith('Hotel, "Harbour"; Spa BEGIN:VEVENT UID:evil@x;')).toBe(true);
    expect(event.summary).not.toMatch(/[\r\n]/);
    expect(event.startDate.toString()).toBe(day(25));
  }, 60_000);
});

describe("an explicit change of the guest's language", () => {
  it("an amendment stating a new language switches the booking's language, and the admin timeline shows the change", async () => {
    const g = genericBooking({ locale: "pt-BR" });
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
  it("a booking id with commas, semicolons, a backslash and a colon gives a percent-encoded UID that parses, the same in every email", async () => {
    const bookingId = `${unique("gen_bk_")},x;y\\z:1 é`;
    const g = genericBooking({ locale: "en", bookingId });
    await runGeneric(g.payload);
    await deliver([`booking_confirmation:${bookingId}`]);
    const mail = await sentWith(g.email, "Your stay at Generic Harbour Hotel is confirmed");
    const cal = calendarOf(mail);
    expect(cal.events).toHaveLength(1);
    const encoded = bookingId.replace(",x;y\\z:1 é", "%2Cx%3By%5Cz%3A1%20%C3%A9");
    expect(cal.events[0].uid).toBe(`stay-${encoded}@example.com`);
    // The id itself still reads as given in DESCRIPTION (TEXT, escaped).
    expect(cal.events[0].description).toContain(`Booking ID: ${bookingId}`);
  }, 60_000);
});

describe("the traveller's calendar", () => {
  it("each flight segment is a timed event in UTC from its airports' zones; a schedule change raises SEQUENCE on the same UID", async () => {
    const order = unique("ord_");
    const e = structuredClone(orderCreated);
    delete e._modeled_on;
    e.id = unique("wev_");
    e.data.object.id = order;
    await runDuffel(e);
    const [{ contact_email: to }] = await rows("SELECT contact_email FROM bookings WHERE booking_id = ?", order);
    await deliver([`flight_confirmation:${order}`]);
    const confirmation = calendarOf((await sent(to)).find((m) => m.subject.startsWith("Your flight")));
    const [segment] = confirmation.events;
    expect(segment.uid).toBe(`flight-${order}-1@example.com`);
    expect(segment.sequence).toBe(0);
    // 07:15 at LHR in June is BST (UTC+1); 10:25 at BCN is CEST (UTC+2).
    expect(segment.startDate.zone.tzid).toBe("UTC");
    expect(segment.startDate.toString()).toBe("2026-06-12T06:15:00Z");
    expect(segment.endDate.toString()).toBe("2026-06-12T08:25:00Z");
    expect(segment.summary).toContain("LHR → BCN");

    const change = structuredClone(aicEvent);
    delete change._modeled_on;
    change.id = unique("wev_");
    change.data.object.id = order;
    await runDuffel(change);
    await deliver([`flight_changed:${order}:aic_0000FAKEAIC00001`]);
    const changed = calendarOf(await sentWith(to, "Important: your flight schedule changed"));
    expect(changed.method).toBe("PUBLISH");
    expect(changed.events[0].uid).toBe(segment.uid);
    expect(changed.events[0].sequence).toBeGreaterThan(segment.sequence);
    // The new departure 09:40 at LHR (BST) → 08:40Z.
    expect(changed.events[0].startDate.toString()).toBe("2026-06-12T08:40:00Z");
  }, 90_000);
});
