// Hotel time repaired: a hotel whose location lookup fails gets its booking planned in UTC (the
// owner's new-booking alert says the hotel time is unknown); the sweeper looks it up again at its
// back-off time, and once the zone is known (Madrid) the planned sends move to 08:00 hotel time,
// are recorded as moved (timeline, repair), and are made by the sweeper at their new time.
import { env, introspectWorkflowInstance } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { adminCookie, adminPage, futureBooking, instanceIdFor, nextSummerDay, postLiteapi, rows, sweep, unique } from "../e2e/helpers.mjs";

describe("hotel time repaired", () => {
  it("a failed location lookup plans in UTC and says so; the sweeper retries with back-off and moves the planned sends to 08:00 Europe/Madrid", async () => {
    const hotelId = unique("lp_failfirst_");
    const { year, days } = nextSummerDay();
    const d = futureBooking({ checkinInDays: days, nights: 2, hotelId });
    const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(d.eventId));
    try {
      const r = await postLiteapi(d.body);
      expect(r.status, await r.clone().text()).toBe(202);
      await instance.waitForStepResult({ name: `plan ${d.bookingId} v1` });
      // The owner's alert goes out after the plan, saying what it knows of the hotel's time.
      await instance.waitForStepResult({ name: `email owner_new_booking:${d.bookingId}` });
    } finally {
      await instance.dispose();
    }
    const planned = () =>
      rows(
        "SELECT kind, due_at_ms, zone, zone_source, local_time, instance_id, replanned_from, status FROM scheduled_sends WHERE booking_id = ? ORDER BY kind",
        d.bookingId,
      );
    const before = await planned();
    expect(before.map((p) => [p.kind, p.zone_source, p.status])).toEqual([
      ["arrival_guide", "utc", "planned"],
      ["checkin_day", "utc", "planned"],
      ["thank_you", "utc", "planned"],
    ]);
    expect(new Date(before[1].due_at_ms).toISOString()).toBe(`${year}-07-15T08:00:00.000Z`);
    const [alert] = await rows("SELECT text_body FROM email_contents WHERE dedupe_key = ?", `owner_new_booking:${d.bookingId}`);
    expect(alert.text_body).toContain("Hotel time: unknown");

    const [cached] = await rows("SELECT error, lookup_failures, retry_at_ms, replan_pending FROM hotel_locations WHERE hotel_id = ?", hotelId);
    expect(cached.error).toMatch(/500/);
    expect(cached.lookup_failures).toBe(1);
    expect(cached.replan_pending).toBe(1);
    // Back-off: the first retry 15 minutes after the failure.
    expect(cached.retry_at_ms - Date.now()).toBeGreaterThan(14 * 60_000);
    expect(cached.retry_at_ms - Date.now()).toBeLessThanOrEqual(15 * 60_000);

    // A tick before the retry time changes nothing.
    await sweep();
    expect((await planned()).map((p) => p.zone_source)).toEqual(["utc", "utc", "utc"]);

    // The retry time comes: looked up again (this time the supplier answers Madrid), re-planned.
    await env.DB.prepare("UPDATE hotel_locations SET retry_at_ms = ? WHERE hotel_id = ?").bind(Date.now() - 1, hotelId).run();
    await Promise.all([sweep(), sweep()]);
    const after = await planned();
    expect(after.map((p) => [p.kind, p.zone, p.zone_source, p.instance_id, p.status])).toEqual([
      ["arrival_guide", "Europe/Madrid", "coordinates", "sweeper", "planned"],
      ["checkin_day", "Europe/Madrid", "coordinates", "sweeper", "planned"],
      ["thank_you", "Europe/Madrid", "coordinates", "sweeper", "planned"],
    ]);
    expect(new Date(after[1].due_at_ms).toISOString()).toBe(`${year}-07-15T06:00:00.000Z`);
    expect(after[1].local_time).toBe(`${year}-07-15T08:00:00+02:00`);
    expect(after[1].replanned_from).toBe(`${year}-07-15T08:00:00+00:00`);
    expect(await rows("SELECT zone, zone_source, error, replan_pending FROM hotel_locations WHERE hotel_id = ?", hotelId)).toEqual([
      { zone: "Europe/Madrid", zone_source: "coordinates", error: null, replan_pending: 0 },
    ]);
    const repairs = await rows("SELECT kind, reason FROM repairs WHERE subject = ?", d.bookingId);
    expect(repairs).toHaveLength(1);
    expect(repairs[0].kind).toBe("zone_replanned");
    expect(repairs[0].reason).toContain(`checkin day ${year}-07-15T08:00:00+00:00 → ${year}-07-15T08:00:00+02:00`);

    const cookie = await adminCookie();
    const timeline = await adminPage(`/admin/booking?id=${encodeURIComponent(d.bookingId)}`, cookie);
    expect(timeline).toContain("checkin_day moved to hotel time");

    // Its new time comes: the sweeper makes it (once, however many ticks).
    await env.DB.prepare("UPDATE scheduled_sends SET due_at_ms = ? WHERE booking_id = ? AND kind = 'arrival_guide'").bind(Date.now() - 1, d.bookingId).run();
    await Promise.all([sweep(), sweep()]);
    expect(await rows("SELECT status FROM scheduled_sends WHERE booking_id = ? AND kind = 'arrival_guide'", d.bookingId)).toEqual([{ status: "sent" }]);
    expect(await rows("SELECT dedupe_key FROM emails WHERE booking_id = ? AND kind = 'arrival_guide'", d.bookingId)).toHaveLength(1);
    expect(await rows("SELECT status FROM scheduled_sends WHERE booking_id = ? AND kind = 'checkin_day'", d.bookingId)).toEqual([{ status: "planned" }]);
  });

  it("a hotel marked while nothing could be looked up is looked up at its time and unmarked", async () => {
    // A hotel marked by a plan made while no lookup could run (no API key then; the migration marks
    // such hotels too).
    const hotelId = unique("lp_nokey_");
    await env.DB.prepare(
      "INSERT INTO hotel_locations (hotel_id, fetched_at_ms, error, retry_at_ms, replan_pending) VALUES (?, 0, 'no zone known yet', 0, 1)",
    )
      .bind(hotelId)
      .run();
    // This run has a key: the lookup runs and finds the hotel (Barcelona); no booking of it waits.
    await sweep();
    expect(await rows("SELECT zone, replan_pending, lookup_failures FROM hotel_locations WHERE hotel_id = ?", hotelId)).toEqual([
      { zone: "Europe/Madrid", replan_pending: 0, lookup_failures: 0 },
    ]);
  });
});
