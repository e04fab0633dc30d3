// Least authority where an event could still reach past its owner, inside workerd:
// - a partner's own flight booking never makes the engine read Duffel's API with the engine's
//   Duffel token (only orders Duffel's own events stored are looked up there);
// - a refused event writes nothing at all: no contact, no language, no replaced mark;
// - a checkout start cannot take a prebook id that another owner's booking or checkout holds.
import { env } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import orderCreated from "../fixtures/duffel-order-created.json";
import { PARTNERS, dateInDays, duffelSignature, postDuffel, rows, runGenericAs, runLiteapi, unique } from "./helpers.mjs";
import { liteapiPrebook, partnerHotelBooked } from "./payloads.mjs";

const [ACME] = PARTNERS.acme;

/** Every request the fake suppliers' read API received for `path`. */
async function supplierRequests(path) {
  const all = await (await fetch(`${env.DUFFEL_API_BASE_URL}/__requests`)).json();
  return all.filter((r) => r.path === path);
}

/** A generic `flight_booked` of order `orderId` for `email` (one segment, 20 days ahead). */
function flightBooked(orderId, email, { first = "Mallory", locale } = {}) {
  const day = dateInDays(20);
  return {
    type: "flight_booked",
    data: {
      booking_id: orderId,
      booking_reference: "PNR123",
      status: "CONFIRMED",
      contact: { name: { first_name: first, last_name: "Partner" }, email, phone: "+15550109999" },
      passengers: [{ first_name: first, last_name: "Partner" }],
      segments: [
        {
          flight_number: "ZZ 0472",
          origin: { iata_code: "MAD", name: "Madrid Barajas", city_name: "Madrid", time_zone: "Europe/Madrid" },
          destination: { iata_code: "LHR", name: "London Heathrow", city_name: "London", time_zone: "Europe/London" },
          departing_at: `${day}T09:00:00`,
          arriving_at: `${day}T10:30:00`,
        },
      ],
      total: { amount: "212.40", currency: "EUR" },
      sandbox: false,
      ...(locale ? { locale } : {}),
    },
  };
}

/** Duffel's `order.created` of `orderId` (the fixture's passenger, contact guest@example.com). */
async function duffelOrder(orderId) {
  const e = structuredClone(orderCreated);
  delete e._modeled_on;
  e.id = unique("wev_");
  e.data.object.id = orderId;
  const body = JSON.stringify(e);
  const r = await postDuffel(body, { signature: await duffelSignature(body) });
  expect(r.status, await r.clone().text()).toBe(202);
  for (let i = 0; i < 400; i++) {
    if ((await rows("SELECT 1 FROM bookings WHERE booking_id = ?", orderId)).length) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`order ${orderId} was not stored`);
}

/** A liteAPI `booking.prebook` delivery of checkout `prebookId` for `email`. */
function prebookDelivery(prebookId, email) {
  return liteapiPrebook({ prebookId, email, transactionId: unique("pi_") });
}

describe("authority, what the last review left", () => {
  it("a partner's schedule change of its own flight booking is never looked up at Duffel with the engine's token; a Duffel order's is", async () => {
    const order = unique("ord_acme_");
    const booked = await runGenericAs("acme", ACME, flightBooked(order, `${unique("pax")}@example.com`));
    expect(booked.output.emails.map(([k]) => k)).toContain(`flight_confirmation:${order}`);
    const changed = await runGenericAs("acme", ACME, { type: "flight_schedule_changed", data: { order_id: order, change_id: "aic_0000FAKEAIC0001" } });
    expect(await supplierRequests("/air/airline_initiated_changes").then((rs) => rs.filter((r) => r.query.order_id === order))).toEqual([]);
    expect(changed.output.emails).toEqual([]);
    expect(changed.output.skipped).toEqual([["flight_changed", expect.stringMatching(/not a Duffel order/)]]);
    expect(await rows("SELECT dedupe_key FROM emails WHERE booking_id = ? AND dedupe_key LIKE 'flight_changed:%'", order)).toEqual([]);

    // Duffel's own order: looked up with the engine's token, as before.
    const duffel = unique("ord_");
    await duffelOrder(duffel);
    const e = { type: "flight_schedule_changed", data: { order_id: duffel, change_id: null } };
    // A partner may not even name it (foreign); Duffel's own event is what looks it up, tested in
    // flights-and-sources.test.mjs. Here: the partner's naming reads nothing at Duffel either.
    const refused = await runGenericAs("acme", ACME, e);
    expect(refused.output.skipped[0][1]).toMatch(/^refused: booking .* belongs to duffel/);
    expect((await supplierRequests("/air/airline_initiated_changes")).filter((r) => r.query.order_id === duffel)).toEqual([]);
  });

  it("a refused flight booking writes nothing: no contact row for its email, the owner's contact unchanged, no language", async () => {
    const order = unique("ord_");
    await duffelOrder(order);
    const [duffelContact] = await rows("SELECT email, first_name, last_name, phone FROM contacts WHERE email = 'guest@example.com'");
    const attacker = `${unique("mallory")}@example.com`;
    for (const email of [attacker, "guest@example.com"]) {
      const { output } = await runGenericAs("acme", ACME, flightBooked(order, email, { locale: "pt-BR" }));
      expect(output.skipped).toEqual([["flight_booked", `refused: booking ${order} belongs to duffel; this event came from generic partner "acme"`]]);
    }
    expect(await rows("SELECT COUNT(*) AS n FROM contacts WHERE email = ?", attacker)).toEqual([{ n: 0 }]);
    expect(await rows("SELECT email, first_name, last_name, phone FROM contacts WHERE email = 'guest@example.com'")).toEqual([duffelContact]);
    expect(await rows("SELECT source, partner FROM bookings WHERE booking_id = ?", order)).toEqual([{ source: "duffel", partner: null }]);
    const [{ guest_locale }] = await rows("SELECT guest_locale FROM bookings WHERE booking_id = ?", order);
    expect(guest_locale).not.toBe("pt");
  });

  it("a checkout start naming a prebook id a partner's booking holds is refused: no attempt recorded, no follow-up, the owner told", async () => {
    const prebookId = unique("PB_TAKEN_");
    const stay = unique("AC_");
    await runGenericAs("acme", ACME, partnerHotelBooked(stay, { prebook_id: prebookId }));
    const guest = `${unique("guest")}@example.com`;
    const d = prebookDelivery(prebookId, guest);
    const out = await runLiteapi(d);
    const reason = `checkout ${prebookId} belongs to generic partner "acme"; this event came from liteapi`;
    expect(out.skipped).toEqual([["checkout_started", `refused: ${reason}`]]);
    expect(await rows("SELECT COUNT(*) AS n FROM checkout_attempts WHERE prebook_id = ?", prebookId)).toEqual([{ n: 0 }]);
    expect(await rows("SELECT refused_reason FROM raw_events WHERE source = 'liteapi' AND event_id = ?", d.eventId)).toEqual([{ refused_reason: reason }]);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE to_addr = ?", guest)).toEqual([{ n: 0 }]);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE dedupe_key LIKE ?", `owner_foreign_event:${prebookId}:%`)).toEqual([{ n: 1 }]);
  });

  it("a checkout start naming a prebook id another owner's checkout holds is refused, and the journey never decides on that checkout", async () => {
    const prebookId = unique("PB_HELD_");
    const held = `${unique("held")}@example.com`;
    await rows(
      "INSERT INTO checkout_attempts (prebook_id, email, attempt_day, attempted_at_ms, details_json, source, partner) VALUES (?, ?, ?, ?, '{}', 'generic', 'acme') RETURNING prebook_id",
      prebookId,
      held,
      new Date().toISOString().slice(0, 10),
      Date.now(),
    );
    const d = prebookDelivery(prebookId, `${unique("guest")}@example.com`);
    const out = await runLiteapi(d);
    expect(out.skipped).toEqual([["checkout_started", `refused: checkout ${prebookId} belongs to generic partner "acme"; this event came from liteapi`]]);
    expect(await rows("SELECT source, partner, email, outcome FROM checkout_attempts WHERE prebook_id = ?", prebookId)).toEqual([{ source: "generic", partner: "acme", email: held, outcome: null }]);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE to_addr = ?", held)).toEqual([{ n: 0 }]);
  });
});
