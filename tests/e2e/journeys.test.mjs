// Booking journeys over weeks, inside workerd with Workflow introspection: sleeps are disabled
// (or left on, to stop a journey "in the middle") and the planned sleep targets are asserted from
// D1's scheduled_sends.
import { env, introspectWorkflowInstance } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import {
  madridOffsetHours, futureBooking, instanceIdFor, liteapiEvent, outboxState, postLiteapi, rows, sendThrough,
  unique, runLiteapi, startHeldBack, utc,
} from "./helpers.mjs";

describe("hotel journey", () => {
  it("a confirmed booking walks its whole journey and sends each email exactly once", async () => {
    const d = futureBooking({ checkinInDays: 30, nights: 3 });
    const out = await runLiteapi(d);
    const keys = out.emails.map(([k]) => k);
    expect(keys).toEqual([
      `booking_confirmation:${d.bookingId}`,
      `owner_new_booking:${d.bookingId}`,
      `arrival_guide:${d.bookingId}:${d.checkin}`,
      `checkin_day:${d.bookingId}:${d.checkin}`,
      `thank_you:${d.bookingId}`,
    ]);
    expect(out.emails.every(([, what]) => what === "enqueued")).toBe(true);

    // The sleep targets: 08:00 / 08:00 / 10:00 hotel time. The hotel's coordinates come from the
    // (fake) liteAPI hotel data API: Barcelona → the coordinate lookup, Europe/Madrid (CET/CEST).
    const plan = await rows(
      "SELECT kind, due_at_ms, status, zone, zone_source FROM scheduled_sends WHERE booking_id = ? ORDER BY due_at_ms",
      d.bookingId,
    );
    const madrid = (date, days, hh) => utc(date, days, hh - madridOffsetHours(date, days), 0);
    const zone = { zone: "Europe/Madrid", zone_source: "coordinates" };
    expect(plan).toEqual([
      { kind: "arrival_guide", due_at_ms: madrid(d.checkin, -3, 8), status: "sent", ...zone },
      { kind: "checkin_day", due_at_ms: madrid(d.checkin, 0, 8), status: "sent", ...zone },
      { kind: "thank_you", due_at_ms: madrid(d.checkout, 1, 10), status: "sent", ...zone },
    ]);
    const cached = await rows("SELECT latitude, longitude, error, zone, zone_source FROM hotel_locations WHERE hotel_id = 'lp_fake_1001'");
    expect(cached).toEqual([{ latitude: 41.38, longitude: 2.18, error: null, ...zone }]);

    // The same booking delivered again under another event id sends nothing new.
    const again = futureBooking({ bookingId: d.bookingId, checkinInDays: 30, nights: 3 });
    const out2 = await runLiteapi(again);
    expect(out2.emails.every(([, what]) => what === "already_claimed")).toBe(true);

    for (const key of keys.filter((k) => !k.startsWith("owner_"))) {
      await sendThrough(key);
    }
    const state = await outboxState();
    for (const key of keys) {
      const items = state.items.filter((i) => i.dedupe_key === key);
      expect(items, key).toHaveLength(1);
      expect(items[0].status, key).toBe("sent");
    }
    const recorded = await rows("SELECT dedupe_key FROM emails WHERE booking_id = ?", d.bookingId);
    expect(recorded).toHaveLength(5);
  });

  it("a late booking gets no burst of past-due mail: the arrival guide is merged into the confirmation", async () => {
    const d = futureBooking({ checkinInDays: 1, nights: 2 });
    const out = await runLiteapi(d);
    const keys = out.emails.map(([k]) => k);
    expect(keys).not.toContain(`arrival_guide:${d.bookingId}:${d.checkin}`);
    expect(keys).toContain(`checkin_day:${d.bookingId}:${d.checkin}`);
    const plan = await rows("SELECT kind, status FROM scheduled_sends WHERE booking_id = ? ORDER BY kind", d.bookingId);
    expect(plan).toEqual([
      { kind: "arrival_guide", status: "merged" },
      { kind: "checkin_day", status: "sent" },
      { kind: "thank_you", status: "sent" },
    ]);
  });

  it("a hotel data lookup that fails falls back cleanly (UTC) and is cached", async () => {
    const hotelId = unique("lp_fail_");
    const d = futureBooking({ checkinInDays: 20, hotelId });
    const out = await runLiteapi(d);
    expect(out.emails).toHaveLength(5);
    const plan = await rows("SELECT due_at_ms, zone, zone_source FROM scheduled_sends WHERE booking_id = ? AND kind = 'checkin_day'", d.bookingId);
    expect(plan[0].due_at_ms).toBe(utc(d.checkin, 0, 8, 0));
    expect(plan[0]).toMatchObject({ zone: "UTC", zone_source: "utc" });
    // The failure is cached for the retry back-off, with no zone: UTC is not stored as the hotel's.
    const cached = await rows("SELECT zone, zone_source, error IS NOT NULL AS failed FROM hotel_locations WHERE hotel_id = ?", hotelId);
    expect(cached).toEqual([{ zone: null, zone_source: null, failed: 1 }]);
  });

  // "In the middle": the journey's next scheduled step is held back by failing it a few times
  // (the engine retries it with backoff: 2 s, 4 s, 8 s), and the other event is processed in that
  // window — the way a real cancellation lands while a journey sleeps.
  it("a cancellation in the middle stops the rest", async () => {
    const d = futureBooking({ checkinInDays: 30, nights: 3 });
    const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(d.eventId));
    try {
      await startHeldBack(instance, d.body, { held: `send checkin_day ${d.bookingId} v1`, reached: `send arrival_guide ${d.bookingId} v1` });

      const cancel = liteapiEvent("booking.cancel", {
        bookingId: d.bookingId,
        status: "CANCELLED_WITH_CHARGES",
        cancellation_fee: 180,
        refund_amount: 360,
        currency: "EUR",
      });
      const cancelOut = await runLiteapi(cancel);
      expect(cancelOut.emails.map(([k]) => k)).toEqual([
        `booking_cancelled:${d.bookingId}`,
        `owner_booking_cancelled:${d.bookingId}`,
      ]);

      await instance.waitForStatus("complete");
      const out = await instance.getOutput();
      expect(out.emails.map(([k]) => k)).toContain(`arrival_guide:${d.bookingId}:${d.checkin}`);
      expect(out.skipped).toEqual([
        ["checkin_day", "booking cancelled"],
        ["thank_you", "booking cancelled"],
      ]);
    } finally {
      await instance.dispose();
    }
    const sent = await rows("SELECT dedupe_key FROM emails WHERE booking_id = ? ORDER BY id", d.bookingId);
    expect(sent.map((r) => r.dedupe_key.split(":")[0])).toEqual([
      "booking_confirmation",
      "owner_new_booking",
      "arrival_guide",
      "booking_cancelled",
      "owner_booking_cancelled",
    ]);
    const plan = await rows("SELECT kind, status, reason FROM scheduled_sends WHERE booking_id = ? ORDER BY due_at_ms", d.bookingId);
    expect(plan).toEqual([
      { kind: "arrival_guide", status: "sent", reason: null },
      { kind: "checkin_day", status: "skipped", reason: "booking cancelled" },
      { kind: "thank_you", status: "skipped", reason: "booking cancelled" },
    ]);
  }, 90_000);

  it("an amendment re-plans and the old plan sends nothing", async () => {
    const d = futureBooking({ checkinInDays: 40, nights: 2 });
    const first = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(d.eventId));
    try {
      await startHeldBack(first, d.body, { held: `send arrival_guide ${d.bookingId} v1`, reached: `plan ${d.bookingId} v1` });

      const newCheckin = futureBooking({ checkinInDays: 47 }).checkin;
      const newCheckout = futureBooking({ checkinInDays: 49 }).checkin;
      const amend = liteapiEvent("booking.amendment", { bookingId: d.bookingId, checkin: newCheckin, checkout: newCheckout });
      const out = await runLiteapi(amend);
      const keys = out.emails.map(([k]) => k);
      expect(keys[0]).toMatch(new RegExp(`^booking_updated:${d.bookingId}:[0-9a-f]{16}$`));
      expect(keys.slice(1)).toEqual([
        `arrival_guide:${d.bookingId}:${newCheckin}`,
        `checkin_day:${d.bookingId}:${newCheckin}`,
        `thank_you:${d.bookingId}`,
      ]);

      // The same amendment delivered again changes nothing and sends nothing.
      const repeat = await runLiteapi(liteapiEvent("booking.amendment", { bookingId: d.bookingId, checkin: newCheckin, checkout: newCheckout }));
      expect(repeat.emails).toEqual([]);

      await first.waitForStatus("complete");
      const old = await first.getOutput();
      expect(old.skipped).toEqual([
        ["arrival_guide", "superseded by a newer journey version"],
        ["checkin_day", "superseded by a newer journey version"],
        ["thank_you", "superseded by a newer journey version"],
      ]);
    } finally {
      await first.dispose();
    }
    const oldGuide = await rows("SELECT COUNT(*) AS n FROM emails WHERE dedupe_key = ?", `arrival_guide:${d.bookingId}:${d.checkin}`);
    expect(oldGuide).toEqual([{ n: 0 }]);
    const updated = await rows("SELECT COUNT(*) AS n FROM emails WHERE booking_id = ? AND kind = 'booking_updated'", d.bookingId);
    expect(updated).toEqual([{ n: 1 }]);
    const versions = await rows("SELECT journey_version, checkin FROM bookings WHERE booking_id = ?", d.bookingId);
    expect(versions).toEqual([{ journey_version: 2, checkin: futureBooking({ checkinInDays: 47 }).checkin }]);
  }, 90_000);

  it("the same hotel confirmation number delivered twice sends once; a new number sends again", async () => {
    const d = futureBooking({ checkinInDays: 15 });
    await runLiteapi(d);
    const hcn = (number) => liteapiEvent("booking.book.hotelConfirmationNumber", { bookingId: d.bookingId, status: "CONFIRMED", hotelConfirmationCode: number });
    const a = await runLiteapi(hcn("HCN-1"));
    const b = await runLiteapi(hcn("HCN-1"));
    const c = await runLiteapi(hcn("HCN-2"));
    expect(a.emails).toEqual([[`hotel_confirmation_number:${d.bookingId}:HCN-1`, "enqueued"]]);
    expect(b.emails).toEqual([[`hotel_confirmation_number:${d.bookingId}:HCN-1`, "already_claimed"]]);
    expect(c.emails).toEqual([[`hotel_confirmation_number:${d.bookingId}:HCN-2`, "enqueued"]]);
    const stored = await rows("SELECT hotel_confirmation_number FROM bookings WHERE booking_id = ?", d.bookingId);
    expect(stored).toEqual([{ hotel_confirmation_number: "HCN-2" }]);
    const state = await outboxState();
    expect(state.items.filter((i) => i.dedupe_key === `hotel_confirmation_number:${d.bookingId}:HCN-1`)).toHaveLength(1);
  });

  it("an event for a booking not yet known waits for it (unordered webhooks)", async () => {
    const d = futureBooking({ checkinInDays: 12 });
    const hcn = liteapiEvent("booking.book.hotelConfirmationNumber", { bookingId: d.bookingId, hotelConfirmationCode: "EARLY-1" });
    const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(hcn.eventId));
    try {
      await instance.modify(async (m) => { await m.disableRetryDelays(); });
      expect((await postLiteapi(hcn.body)).status).toBe(202);
      await runLiteapi(d);
      await instance.waitForStatus("complete");
      const out = await instance.getOutput();
      expect(out.emails).toEqual([[`hotel_confirmation_number:${d.bookingId}:EARLY-1`, "enqueued"]]);
    } finally {
      await instance.dispose();
    }
  });
});
