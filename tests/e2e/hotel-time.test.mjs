// Hotel time inside workerd: a liteAPI hotel whose hotel data API gives coordinates only gets its
// mails planned at 08:00 in the hotel's real zone (Europe/Madrid, found by the coordinate lookup),
// and the zone is resolved once per hotel, stored with its source, and re-used by later plans.
import { env, introspectWorkflowInstance } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { futureBooking, instanceIdFor, nextSummerDay, postLiteapi, rows, unique } from "./helpers.mjs";

/** Posts a liteAPI booking at `hotelId` for 15 July and waits for its plan step; sleeps stay on. */
async function planSummerBooking(hotelId) {
  const { year, days } = nextSummerDay();
  const d = futureBooking({ checkinInDays: days, nights: 2, hotelId });
  expect(d.checkin).toBe(`${year}-07-15`);
  const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(d.eventId));
  try {
    const r = await postLiteapi(d.body);
    expect(r.status, await r.clone().text()).toBe(202);
    await instance.waitForStepResult({ name: `plan ${d.bookingId} v1` });
  } finally {
    await instance.dispose();
  }
  const plan = await rows(
    "SELECT due_at_ms, zone, zone_source, local_time FROM scheduled_sends WHERE booking_id = ? AND kind = 'checkin_day'",
    d.bookingId,
  );
  expect(plan).toHaveLength(1);
  return { year, row: plan[0] };
}

describe("hotel time zone", () => {
  it("a hotel known only by its coordinates gets its check-in note at 08:00 Europe/Madrid (06:00Z in summer)", async () => {
    const hotelId = unique("lp_madrid_");
    const { year, row } = await planSummerBooking(hotelId);
    expect(new Date(row.due_at_ms).toISOString()).toBe(`${year}-07-15T06:00:00.000Z`);
    expect(row).toMatchObject({ zone: "Europe/Madrid", zone_source: "coordinates", local_time: `${year}-07-15T08:00:00+02:00` });

    const cached = await rows("SELECT latitude, longitude, zone, zone_source, error FROM hotel_locations WHERE hotel_id = ?", hotelId);
    expect(cached).toEqual([{ latitude: 40.4203, longitude: -3.7058, zone: "Europe/Madrid", zone_source: "coordinates", error: null }]);
  });

  it("the stored zone is re-used by every later plan of the hotel, not looked up again", async () => {
    const hotelId = unique("lp_madrid_");
    await planSummerBooking(hotelId);
    // Change the stored zone behind the engine's back: the next plan must follow what D1 says.
    await env.DB.prepare("UPDATE hotel_locations SET zone = 'Atlantic/Canary', zone_source = 'iana' WHERE hotel_id = ?")
      .bind(hotelId)
      .run();
    const { year, row } = await planSummerBooking(hotelId);
    expect(new Date(row.due_at_ms).toISOString()).toBe(`${year}-07-15T07:00:00.000Z`);
    expect(row).toMatchObject({ zone: "Atlantic/Canary", zone_source: "iana", local_time: `${year}-07-15T08:00:00+01:00` });
  });
});
