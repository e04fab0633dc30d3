// Duffel flights (confirmation, airline schedule change, cancellation) and the signed Duffel and
// generic (Standard Webhooks) endpoints, inside workerd.
import { env, introspectWorkflowInstance } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import orderCreated from "../fixtures/duffel-order-created.json";
import aicEvent from "../fixtures/duffel-order-airline-initiated-change.json";
import { duffelSignature, outboxState, postDuffel, postGeneric, rows, runGeneric, unique } from "./helpers.mjs";
import { partnerHotelBooked } from "./payloads.mjs";

function duffelInstanceId(eventId) {
  return `e-duffel-x-${eventId}`;
}

/** A copy of a Duffel webhook fixture with a fresh event id, about order `orderId`. */
function duffelEvent(fixture, orderId) {
  const e = structuredClone(fixture);
  delete e._modeled_on;
  e.id = unique("wev_");
  e.data.object.id = orderId;
  return e;
}

function orderEvent(orderId) {
  return duffelEvent(orderCreated, orderId);
}

function changeEvent(orderId) {
  return duffelEvent(aicEvent, orderId);
}

async function runDuffel(event, { secret } = {}) {
  const body = JSON.stringify(event);
  const instance = await introspectWorkflowInstance(env.JOURNEY, duffelInstanceId(event.id));
  try {
    await instance.modify(async (m) => { await m.disableSleeps(); await m.disableRetryDelays(); });
    const signature = secret ? await duffelSignature(body, secret) : undefined;
    const r = await postDuffel(body, { signature });
    expect(r.status, await r.clone().text()).toBe(202);
    await instance.waitForStatus("complete");
    return await instance.getOutput();
  } finally {
    await instance.dispose();
  }
}

describe("flights", () => {
  it("an airline schedule change sends one urgent email with old and new times; repeats send none, another source's status move changes nothing", async () => {
    const order = unique("ord_");
    const booked = await runDuffel(orderEvent(order));
    expect(booked.emails).toEqual([[`flight_confirmation:${order}`, "enqueued"]]);

    const changed = await runDuffel(changeEvent(order));
    expect(changed.emails).toEqual([[`flight_changed:${order}:aic_0000FAKEAIC00001`, "enqueued"]]);
    const state = await outboxState();
    const urgent = state.items.find((i) => i.dedupe_key === `flight_changed:${order}:aic_0000FAKEAIC00001`);
    expect(urgent.rank).toBe(0);
    const stored = JSON.parse((await rows("SELECT details_json FROM bookings WHERE booking_id = ?", order))[0].details_json);
    expect(stored.segments.map((s) => [s.flight_number, s.departing_at])).toEqual([["ZZ 0476", "2026-06-12T09:40:00"]]);

    // The same change announced again (a new delivery id): nothing new for the traveller.
    const again = await runDuffel(changeEvent(order));
    expect(again.emails).toEqual([]);
    expect(again.skipped).toEqual([["flight_changed", "no traveller-visible change"]]);

    // A status move from another source (the generic one) is not Duffel's word on its order:
    // refused, nothing changes (a status-only move of a source's own booking never emails either,
    // tests/e2e/ownership.test.mjs).
    const status = await runGeneric({ type: "status_changed", data: { booking_id: order, status: "TICKETED" } });
    expect(status.emails).toEqual([]);
    expect(status.skipped[0][1]).toMatch(/^refused: booking .* belongs to duffel/);
    expect(await rows("SELECT status FROM bookings WHERE booking_id = ?", order)).toEqual([{ status: "CONFIRMED" }]);
    const all = await rows("SELECT kind FROM emails WHERE booking_id = ? ORDER BY id", order);
    expect(all.map((r) => r.kind)).toEqual(["flight_confirmation", "flight_changed"]);
  });

  it("a Duffel order cancellation sends one cancellation to the traveller and one alert to the owner", async () => {
    const order = unique("ord_");
    await runDuffel(orderEvent(order));
    const cancel = {
      id: unique("wev_"),
      type: "order_cancellation.confirmed",
      api_version: "v2",
      live_mode: false,
      created_at: "2026-05-21T10:00:00.000000Z",
      data: { object: { id: unique("ore_"), order_id: order, refund_amount: "212.40", refund_currency: "GBP", confirmed_at: "2026-05-21T10:00:00Z" } },
    };
    const out = await runDuffel(cancel);
    expect(out.emails.map(([k]) => k)).toEqual([`booking_cancelled:${order}`, `owner_booking_cancelled:${order}`]);
    expect(await rows("SELECT status FROM bookings WHERE booking_id = ?", order)).toEqual([{ status: "CANCELLED" }]);
  });
});

describe("signed endpoints", () => {
  it("Duffel: a wrong, stale or missing signature gets 401 and nothing is stored; a rotated secret is accepted", async () => {
    const event = orderEvent(unique("ord_"));
    const body = JSON.stringify(event);
    const cases = [
      await duffelSignature(body, "not-the-secret"),
      await duffelSignature(body, "test-duffel-secret", Math.floor(Date.now() / 1000) - 301),
      // One hex digit of a valid signature changed (always to a different digit).
      (await duffelSignature(body)).replace(/v1=(.)/, (_, c) => `v1=${c === "0" ? "1" : "0"}`),
      "garbage",
      "",
    ];
    for (const signature of cases) {
      const r = await postDuffel(body, { signature });
      expect(r.status, signature).toBe(401);
      expect((await r.json()).error).toBe("unauthorized");
    }
    const tampered = await postDuffel(body.replace("FAKE12", "FAKE13"), { signature: await duffelSignature(body) });
    expect(tampered.status).toBe(401);
    expect(await rows("SELECT COUNT(*) AS n FROM raw_events WHERE event_id = ?", event.id)).toEqual([{ n: 0 }]);

    // Both configured secrets (old and new, during rotation) are accepted.
    const out = await runDuffel(event, { secret: "test-duffel-old-secret" });
    expect(out.kind).toBe("flight_booked");
  });

  it("generic: a canonical hotel_booked over Standard Webhooks starts the journey; a tampered body gets 401", async () => {
    const bookingId = unique("gen_bk_");
    const checkin = new Date(Date.now() + 25 * 86_400_000).toISOString().slice(0, 10);
    const checkout = new Date(Date.now() + 27 * 86_400_000).toISOString().slice(0, 10);
    const payload = {
      timestamp: new Date().toISOString(),
      ...partnerHotelBooked(bookingId, {
        email: "gena@example.com",
        hotel_name: "Generic Harbour Hotel",
        checkin,
        checkout,
        holder: { name: { first_name: "Gena", last_name: "Rick" }, email: "gena@example.com", phone: null },
      }),
    };
    const out = await runGeneric(payload);
    expect(out.emails.map(([k]) => k)).toEqual([
      `booking_confirmation:${bookingId}`,
      `owner_new_booking:${bookingId}`,
      `arrival_guide:${bookingId}:${checkin}`,
      `checkin_day:${bookingId}:${checkin}`,
      `thank_you:${bookingId}`,
    ]);
    // IANA zone given: 08:00 Madrid time, DST-correct.
    const plan = await rows("SELECT due_at_ms, zone FROM scheduled_sends WHERE booking_id = ? AND kind = 'checkin_day'", bookingId);
    const local = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Madrid", hour: "2-digit", minute: "2-digit", hour12: false }).format(new Date(plan[0].due_at_ms));
    expect(local).toBe("08:00");
    expect(plan[0].zone).toMatch(/Europe\/Madrid/);

    const body = JSON.stringify(payload);
    const id = unique("msg_");
    const t = Math.floor(Date.now() / 1000);
    const { response: good } = await postGeneric(body, { id: unique("msg_"), t });
    expect(good.status).toBe(202);
    const signedElsewhere = await postGeneric(body, { id, t, secret: "whsec_b3RoZXItc2VjcmV0LTAxMjM0NTY3ODk=" });
    expect(signedElsewhere.response.status).toBe(401);
    const stale = await postGeneric(body, { t: t - 400 });
    expect(stale.response.status).toBe(401);
  });

  it("generic: an unknown type is stored and acknowledged; invalid data gets 400 naming the field", async () => {
    const { response: unknownType } = await postGeneric(JSON.stringify({ type: "loyalty.points", data: {} }));
    expect(unknownType.status).toBe(200);
    expect((await unknownType.json()).status).toBe("ignored");
    const { response: bad } = await postGeneric(JSON.stringify({ type: "hotel_booked", data: { booking_id: "x" } }));
    expect(bad.status).toBe(400);
    const body = await bad.json();
    expect(body.field).toBe("data");
    expect(body.message).toMatch(/missing field/);
  });
});
