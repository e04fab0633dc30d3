// Least authority between suppliers, inside workerd: a generic partner's credential acts only on
// its own bookings. Partner "acme" sends every follow-up kind naming a liteAPI booking, a booking
// of partner "globex" and its own booking: only its own changes; a foreign one changes nothing,
// sends no guest mail, is recorded on its raw event with the reason, shown in the booking's admin
// timeline, and the owner is told once per booking and day. Also: each partner's keys verify only
// its own deliveries (rotation), and partners never share event ids.
import { env, introspectWorkflowInstance, SELF } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { PARTNERS, bookingDelivery, dateInDays, instanceIdOf, postGeneric, rows, runGenericAs, runLiteapi, today, unique } from "./helpers.mjs";
import { partnerHotelBooked } from "./payloads.mjs";

const [ACME, ACME_ROTATED] = PARTNERS.acme;
const [GLOBEX] = PARTNERS.globex;

/** The generic `hotel_booked` payload of a stay 30 days ahead. */
const hotelBooked = (bookingId, email) => partnerHotelBooked(bookingId, { email });

/** What a foreign event must leave untouched: the booking row and every email about it. */
async function snapshot(bookingId) {
  const [booking] = await rows(
    "SELECT status, journey_version, details_json, hotel_confirmation_number, checkin, checkout, replaced_by FROM bookings WHERE booking_id = ?",
    bookingId,
  );
  const emails = await rows("SELECT dedupe_key, status FROM emails WHERE booking_id = ? ORDER BY dedupe_key", bookingId);
  const compensations = await rows("SELECT compensation_id FROM compensations WHERE booking_id = ?", bookingId);
  return { booking, emails, compensations };
}

/** Every follow-up kind, naming `id`. */
function followUps(id) {
  return [
    ["hotel_confirmation_number", { booking_id: id, hotel_confirmation_number: "HCN-TAKEN" }],
    ["checkin_instructions", { booking_id: id, instructions: "Collect your key at https://phish.example/keys" }],
    ["hotel_amended", { booking_id: id, checkin: dateInDays(40), checkout: dateInDays(41) }],
    ["status_changed", { booking_id: id, status: "TICKETED" }],
    ["booking_failed", { booking_kind: "hotel", booking_id: id, reason: "Room no longer available" }],
    ["booking_cancelled", { booking_id: id, with_charges: false, cancellation_fee: null, refund: null }],
  ];
}

async function signIn() {
  const body = new URLSearchParams({ account: "owner", password: "test-admin-password-1", next: "/admin" });
  const r = await SELF.fetch("https://engine.test/admin/login", {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": "198.51.100.201" },
    body,
  });
  expect(r.status).toBe(303);
  return r.headers.get("set-cookie").split(";")[0];
}

describe("a generic partner's credential acts only on its own bookings", () => {
  it("every follow-up kind from partner acme: its own booking changes; a liteAPI and a globex booking change in nothing, no guest mail, one owner alert each, shown in the timeline", async () => {
    // Three bookings: liteAPI's, globex's, acme's own.
    const lite = bookingDelivery();
    await runLiteapi(lite);
    const globexId = unique("GX_");
    await runGenericAs("globex", GLOBEX, hotelBooked(globexId));
    const acmeId = unique("AC_");
    await runGenericAs("acme", ACME, hotelBooked(acmeId));
    expect(await rows("SELECT booking_id, source, partner FROM bookings WHERE booking_id IN (?, ?, ?) ORDER BY source, partner", lite.bookingId, globexId, acmeId)).toEqual([
      { booking_id: acmeId, source: "generic", partner: "acme" },
      { booking_id: globexId, source: "generic", partner: "globex" },
      { booking_id: lite.bookingId, source: "liteapi", partner: null },
    ]);
    const before = { [lite.bookingId]: await snapshot(lite.bookingId), [globexId]: await snapshot(globexId) };

    // Foreign: every kind, plus a hotel_booked and a flight schedule change under the same ids.
    for (const victim of [lite.bookingId, globexId]) {
      const owner = victim === lite.bookingId ? "liteapi" : 'generic partner "globex"';
      const rebookId = unique("AC_rebook_");
      const events = [
        ...followUps(victim),
        ["hotel_booked", hotelBooked(victim, "attacker@example.com").data],
        // A "rebook" of acme's that would mark the victim replaced.
        ["hotel_booked", { ...hotelBooked(rebookId, "attacker@example.com").data, replaces: victim }],
        ["flight_schedule_changed", { order_id: victim, change_id: "aic_evil" }],
      ];
      for (const [type, data] of events) {
        const { output, eventId } = await runGenericAs("acme", ACME, { type, data });
        expect(output.emails, `${type} on ${victim}`).toEqual([]);
        expect(output.skipped, `${type} on ${victim}`).toEqual([
          [type, `refused: booking ${victim} belongs to ${owner}; this event came from generic partner "acme"`],
        ]);
        const [raw] = await rows("SELECT partner, refused_reason, booking_id FROM raw_events WHERE source = 'generic' AND event_id = ?", eventId);
        const named = data.replaces ? data.booking_id : victim;
        expect(raw).toEqual({ partner: "acme", refused_reason: expect.stringContaining(`belongs to ${owner}`), booking_id: named });
      }
      // The refused rebook recorded nothing either.
      expect(await rows("SELECT booking_id FROM bookings WHERE booking_id = ?", rebookId)).toEqual([]);
      // Nothing about the booking changed, no guest email was claimed, no compensation opened.
      expect(await snapshot(victim)).toEqual(before[victim]);
      // One owner alert for the booking and day, however many events.
      const alerts = await rows(
        "SELECT dedupe_key, audience, to_addr FROM emails WHERE substr(dedupe_key, 1, length(?1)) = ?1",
        `owner_foreign_event:${victim}:`,
      );
      expect(alerts).toEqual([{ dedupe_key: `owner_foreign_event:${victim}:${today()}`, audience: "owner", to_addr: "owner@example.com" }]);
    }
    // Nothing was queued for the attacker's address either.
    expect(await rows("SELECT dedupe_key FROM emails WHERE to_addr = 'attacker@example.com'")).toEqual([]);

    // Own: each kind acts on acme's booking.
    const own = Object.fromEntries(followUps(acmeId));
    await runGenericAs("acme", ACME, { type: "hotel_confirmation_number", data: own.hotel_confirmation_number });
    await runGenericAs("acme", ACME_ROTATED, { type: "checkin_instructions", data: own.checkin_instructions });
    await runGenericAs("acme", ACME, { type: "hotel_amended", data: own.hotel_amended });
    const statusMove = await runGenericAs("acme", ACME, { type: "status_changed", data: own.status_changed });
    // A status-only move is recorded, never emailed.
    expect(statusMove.output.emails).toEqual([]);
    let [mine] = await rows("SELECT status, journey_version, hotel_confirmation_number, checkin, details_json FROM bookings WHERE booking_id = ?", acmeId);
    expect(mine).toMatchObject({ status: "TICKETED", journey_version: 2, hotel_confirmation_number: "HCN-TAKEN", checkin: dateInDays(40) });
    expect(JSON.parse(mine.details_json).checkin_instructions).toContain("phish.example");
    expect((await rows("SELECT dedupe_key FROM emails WHERE booking_id = ?", acmeId)).map((r) => r.dedupe_key)).toEqual(
      expect.arrayContaining([`hotel_confirmation_number:${acmeId}:HCN-TAKEN`, expect.stringMatching(/^booking_updated:/)]),
    );
    await runGenericAs("acme", ACME, { type: "booking_cancelled", data: own.booking_cancelled });
    [mine] = await rows("SELECT status FROM bookings WHERE booking_id = ?", acmeId);
    expect(mine.status).toBe("CANCELLED");
    expect(await rows("SELECT dedupe_key FROM emails WHERE dedupe_key = ?", `booking_cancelled:${acmeId}`)).toHaveLength(1);
    // acme's own failure of another own booking opens its compensation.
    const failing = unique("AC_");
    await runGenericAs("acme", ACME, hotelBooked(failing));
    await runGenericAs("acme", ACME, { type: "booking_failed", data: { booking_kind: "hotel", booking_id: failing, reason: "Overbooked" } });
    expect(await rows("SELECT source, partner, booking_id FROM compensations WHERE booking_id = ?", failing)).toEqual([
      { source: "generic", partner: "acme", booking_id: failing },
    ]);
    expect((await rows("SELECT status FROM bookings WHERE booking_id = ?", failing))[0].status).toBe("FAILED");

    // The booking's admin timeline shows the refused events with their reason.
    const cookie = await signIn();
    const page = await SELF.fetch(`https://engine.test/admin/booking?id=${encodeURIComponent(lite.bookingId)}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("refused, nothing changed: booking");
    expect(html).toContain("signed by partner acme");
    // Eight refused events name the booking itself (the rebook names its own new id).
    expect((html.match(/refused, nothing changed/g) ?? []).length).toBe(8);
  });

  it("a status change whose owner check found no booking, then finds another owner's booking stored meanwhile, changes nothing and is refused", async () => {
    const lite = bookingDelivery();
    await runLiteapi(lite);
    const before = await snapshot(lite.bookingId);
    // The owner check ran before liteAPI's booking was stored (it does not wait for a status
    // change's booking): its step answered "nothing foreign" (`null`, as JSON text: steps return
    // their result serialised).
    const { output, eventId } = await runGenericAs(
      "acme",
      ACME,
      { type: "status_changed", data: { booking_id: lite.bookingId, status: "TICKETED" } },
      { modify: (m) => m.mockStepResult({ name: `owner check ${lite.bookingId}` }, "null") },
    );
    expect(output.skipped).toEqual([
      ["status_changed", `refused: booking ${lite.bookingId} belongs to liteapi; this event came from generic partner "acme"`],
    ]);
    expect(await snapshot(lite.bookingId)).toEqual(before);
    const [raw] = await rows("SELECT refused_reason FROM raw_events WHERE source = 'generic' AND event_id = ?", eventId);
    expect(raw.refused_reason).toContain("belongs to liteapi");
  });

  it("a follow-up that arrives before another owner's booking waits for it, then is refused", async () => {
    const lite = bookingDelivery();
    const id = unique("msg_");
    const eventId = `acme/${id}`;
    const instance = await introspectWorkflowInstance(env.JOURNEY, await instanceIdOf("generic", eventId));
    try {
      await instance.modify(async (m) => {
        await m.disableSleeps();
        await m.disableRetryDelays();
      });
      const cancel = { type: "booking_cancelled", data: { booking_id: lite.bookingId, with_charges: false, cancellation_fee: null, refund: null } };
      const { response } = await postGeneric(JSON.stringify(cancel), { id, secret: ACME });
      expect(response.status).toBe(202);
      await runLiteapi(lite);
      await instance.waitForStatus("complete");
      expect((await instance.getOutput()).skipped[0][1]).toMatch(/^refused: booking .* belongs to liteapi/);
    } finally {
      await instance.dispose();
    }
    expect((await rows("SELECT status FROM bookings WHERE booking_id = ?", lite.bookingId))[0].status).toBe("CONFIRMED");
  });
  it("a failure whose booking arrives, another owner's, while it waits for the payment is refused after the wait: nothing closed, nothing withdrawn", async () => {
    // The first look (the open step) saw nothing stored under the named id: its recorded result
    // is given, so the booking can be stored "during the wait" without racing a real sleep.
    const lite = bookingDelivery();
    await runLiteapi(lite);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`booking:${lite.bookingId}`));
    const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    const compensationId = `comp-${hex.slice(0, 24)}`;
    const before = await snapshot(lite.bookingId);
    const id = unique("msg_");
    // What that first look wrote: acme's compensation under the id the booking id derives, its
    // steps not started.
    const at = Date.now();
    await env.DB.prepare(
      "INSERT INTO compensations (compensation_id, cause, booking_id, source, partner, event_id, event_name, reason, state, created_at_ms, updated_at_ms) VALUES (?, 'supplier_failed', ?, 'generic', 'acme', ?, 'booking_failed', 'Room no longer available', 'open', ?, ?)",
    )
      .bind(compensationId, lite.bookingId, `acme/${id}`, at, at)
      .run();
    for (const [position, step] of ["close_booking", "withdraw_emails", "refund", "guest_notice", "owner_alert"].entries()) {
      await env.DB.prepare("INSERT INTO compensation_steps (compensation_id, step, position, status, updated_at_ms) VALUES (?, ?, ?, 'pending', ?)")
        .bind(compensationId, step, position + 1, at)
        .run();
    }
    const instance = await introspectWorkflowInstance(env.JOURNEY, await instanceIdOf("generic", `acme/${id}`));
    try {
      await instance.modify(async (m) => {
        await m.disableSleeps();
        await m.disableRetryDelays();
        await m.mockStepResult(
          { name: `compensation open ${compensationId}` },
          // Step results cross the Workflow boundary as JSON text.
          JSON.stringify({ id: compensationId, booking_id: lite.bookingId, payment_known: false, foreign: null }),
        );
      });
      const failure = {
        type: "booking_failed",
        data: { booking_kind: "hotel", booking_id: lite.bookingId, reason: "Room no longer available", email: "attacker@example.com" },
      };
      const { response } = await postGeneric(JSON.stringify(failure), { id, secret: ACME });
      expect(response.status).toBe(202);
      await instance.waitForStatus("complete");
      expect((await instance.getOutput()).skipped[0][1]).toMatch(/^refused: booking .* belongs to liteapi/);
    } finally {
      await instance.dispose();
    }
    expect(await snapshot(lite.bookingId)).toEqual(before);
    expect((await rows("SELECT status FROM bookings WHERE booking_id = ?", lite.bookingId))[0].status).toBe("CONFIRMED");
    expect(await rows("SELECT dedupe_key FROM emails WHERE to_addr = ?", "attacker@example.com")).toEqual([]);
    // acme's compensation is gone, so liteAPI's own failure of this booking (the same
    // compensation id) is not refused as acme's.
    expect(await rows("SELECT compensation_id FROM compensations WHERE compensation_id = ?", compensationId)).toEqual([]);
    expect(await rows("SELECT step FROM compensation_steps WHERE compensation_id = ?", compensationId)).toEqual([]);
  });
});

describe("partners share nothing", () => {
  it("each partner's keys verify only its own deliveries, both of a rotated pair work, and an unknown key is 401", async () => {
    const payload = JSON.stringify({ type: "loyalty.points", data: {} });
    for (const [partner, secret] of [["acme", ACME], ["acme", ACME_ROTATED], ["globex", GLOBEX]]) {
      const { response, id } = await postGeneric(payload, { secret });
      expect(response.status).toBe(200);
      const [raw] = await rows("SELECT partner FROM raw_events WHERE source = 'generic' AND event_id = ?", `${partner}/${id}`);
      expect(raw, `${partner} ${secret}`).toEqual({ partner });
    }
    const stranger = await postGeneric(payload, { secret: "whsec_c3RyYW5nZXIta2V5LTAxMjM0NTY3ODlhYmNkZWY=" });
    expect(stranger.response.status).toBe(401);
  });

  it("two partners may use the same webhook-id: neither is a duplicate of the other; a redelivery still is", async () => {
    const payload = JSON.stringify({ type: "loyalty.points", data: {} });
    const id = unique("msg_same_");
    for (const secret of [ACME, GLOBEX]) {
      const { response } = await postGeneric(payload, { id, secret });
      expect(await response.json()).toMatchObject({ status: "ignored" });
    }
    const again = await postGeneric(payload, { id, secret: ACME_ROTATED });
    expect(await again.response.json()).toMatchObject({ status: "duplicate", eventId: `acme/${id}` });
    // The default partner cannot take acme's ids by sending them in acme's form.
    const mimic = await postGeneric(payload, { id: `acme/${unique("msg_")}` });
    expect((await mimic.response.json()).eventId).toMatch(/^default\/acme\//);
  });
});

describe("Standard Webhooks signatures per the spec", () => {
  it("an undecodable entry next to a valid one is skipped (accepted); only invalid ones are 401", async () => {
    const payload = JSON.stringify({ type: "loyalty.points", data: {} });
    const ok = await postGeneric(payload, { secret: ACME, extraSignatures: ["v1,BADSIG", "v1a,c2lnbmF0dXJl", "garbage"] });
    expect(ok.response.status).toBe(200);
    const id = unique("msg_");
    const t = Math.floor(Date.now() / 1000);
    const bad = await SELF.fetch("https://engine.test/webhooks/generic", {
      method: "POST",
      headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(t), "webhook-signature": "v1,BADSIG v1,dGhpcyBpcyBub3QgaXQ=" },
      body: payload,
    });
    expect(bad.status).toBe(401);
    expect(await rows("SELECT COUNT(*) AS n FROM raw_events WHERE event_id LIKE ?", `%${id}`)).toEqual([{ n: 0 }]);
  });
});
