// Faults a journey must survive: a send step that keeps failing, a cancellation while
// a guest email waits in the outbox, and an email whose moment passed while it waited. Faults are
// injected at the platform level (the Workflow engine's step mocks) or by moving the queued
// email's own record, never through code paths only tests take.
import { env, introspectWorkflowInstance, runInDurableObject } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import {
  madridOffsetHours, dateInDays, futureBooking, instanceIdFor, item, liteapiEvent, outboxState, outboxStub,
  rows, runOutbox, sendThrough, runLiteapi, startHeldBack, utc,
} from "./helpers.mjs";

describe("faults", () => {
  it("send steps that keep failing do not end the journey: recorded failed, one owner alert, the next send goes out", async () => {
    const d = futureBooking({ checkinInDays: 30, nights: 3 });
    const id = d.bookingId;
    const out = await runLiteapi(d, async (m) => {
      // Every attempt fails (13 retries each, delays off): the confirmation's hand-over and two
      // scheduled sends.
      await m.mockStepError({ name: `email booking_confirmation:${id}` }, new Error("outbox unavailable (injected)"));
      await m.mockStepError({ name: `send arrival_guide ${id} v1` }, new Error("outbox unavailable (injected)"));
      await m.mockStepError({ name: `send thank_you ${id} v1` }, new Error("outbox unavailable (injected)"));
    });
    expect(out.failed).toEqual([
      [`booking_confirmation:${id}`, expect.stringContaining("outbox unavailable (injected)")],
      ["arrival_guide v1", expect.stringContaining("outbox unavailable (injected)")],
      ["thank_you v1", expect.stringContaining("outbox unavailable (injected)")],
    ]);
    const checkinKey = `checkin_day:${id}:${d.checkin}`;
    expect(out.emails.map(([k]) => k)).toEqual([`owner_new_booking:${id}`, checkinKey]);

    const plan = await rows("SELECT kind, status, reason FROM scheduled_sends WHERE booking_id = ? ORDER BY due_at_ms", id);
    expect(plan).toEqual([
      { kind: "arrival_guide", status: "failed", reason: expect.stringContaining("outbox unavailable (injected)") },
      { kind: "checkin_day", status: "sent", reason: null },
      { kind: "thank_you", status: "failed", reason: expect.stringContaining("outbox unavailable (injected)") },
    ]);

    // One alert for the booking and day, not one per failed step.
    const alerts = await rows("SELECT dedupe_key, audience FROM emails WHERE dedupe_key LIKE ?", `owner_email_failed:journey:${id}:%`);
    expect(alerts).toEqual([{ dedupe_key: `owner_email_failed:journey:${id}:${new Date().toISOString().slice(0, 10)}`, audience: "owner" }]);

    // The next send really goes out, and so does the alert.
    const state = await sendThrough(checkinKey);
    expect(item(state, checkinKey).status).toBe("sent");
    const after = await runOutbox();
    expect(item(after, alerts[0].dedupe_key).status).toBe("sent");
  }, 120_000);

  it("a cancellation while the arrival guide waits in the outbox: the guide never reaches a provider, the notice does", async () => {
    const d = futureBooking({ checkinInDays: 30, nights: 3 });
    const id = d.bookingId;
    const out = await runLiteapi(d);
    const guideKey = `arrival_guide:${id}:${d.checkin}`;
    expect(out.emails.map(([k]) => k)).toContain(guideKey);
    expect(item(await outboxState(), guideKey).status).toBe("queued");

    const cancel = liteapiEvent("booking.cancel", {
      bookingId: id,
      status: "CANCELLED",
      refund_amount: 540,
      currency: "EUR",
    });
    const cancelOut = await runLiteapi(cancel);
    expect(cancelOut.failed).toEqual([]);
    expect(cancelOut.emails.map(([k]) => k)).toEqual([`booking_cancelled:${id}`, `owner_booking_cancelled:${id}`]);

    // Withdrawn at once, before any turn.
    const withdrawn = item(await outboxState(), guideKey);
    expect(withdrawn).toMatchObject({ status: "skipped", last_error: "booking cancelled", attempts: 0 });

    const state = await sendThrough(`booking_cancelled:${id}`);
    expect(item(state, `booking_cancelled:${id}`).status).toBe("sent");
    const guide = item(state, guideKey);
    expect(guide.status).toBe("skipped");
    expect(state.attempts.filter((t) => t.seq === guide.seq)).toEqual([]);
    const recorded = await rows("SELECT status, last_error FROM emails WHERE dedupe_key = ?", guideKey);
    expect(recorded).toEqual([{ status: "skipped", last_error: "booking cancelled" }]);
  }, 120_000);

  it("an email whose moment passed while it waited is skipped as stale and recorded", async () => {
    const d = futureBooking({ checkinInDays: 30, nights: 3 });
    const out = await runLiteapi(d);
    const guideKey = `arrival_guide:${d.bookingId}:${d.checkin}`;
    expect(out.emails.map(([k]) => k)).toContain(guideKey);

    // Queued with its moment: 00:00 hotel time on the check-in day (the fake hotel data puts the
    // hotel near Barcelona: Europe/Madrid). Then a backlog holds it past that moment.
    const midnight = (date, days) => utc(date, days, -madridOffsetHours(date, days), 0);
    const expires = await runInDurableObject(outboxStub(), async (_o, state) =>
      state.storage.sql.exec("SELECT expires_at_ms, journey_version FROM queue WHERE dedupe_key = ?", guideKey).one(),
    );
    expect(expires).toEqual({ expires_at_ms: midnight(d.checkin, 0), journey_version: 1 });
    // D1's plan holds the same moment, for whoever decides a send later.
    const planned = await rows(
      "SELECT kind, expires_at_ms FROM scheduled_sends WHERE booking_id = ? ORDER BY due_at_ms",
      d.bookingId,
    );
    expect(planned).toEqual([
      { kind: "arrival_guide", expires_at_ms: midnight(d.checkin, 0) },
      { kind: "checkin_day", expires_at_ms: midnight(d.checkin, 1) },
      { kind: "thank_you", expires_at_ms: midnight(d.checkout, 15) },
    ]);
    await runInDurableObject(outboxStub(), async (_o, state) => {
      state.storage.sql.exec("UPDATE queue SET expires_at_ms = ? WHERE dedupe_key = ?", Date.now() - 60_000, guideKey);
    });

    const state = await sendThrough(guideKey);
    const guide = item(state, guideKey);
    expect(guide).toMatchObject({ status: "skipped", attempts: 0 });
    expect(guide.last_error).toMatch(/^stale: pointless since \d{4}-\d\d-\d\dT\d\d:\d\dZ$/);
    const recorded = await rows("SELECT status, last_error FROM emails WHERE dedupe_key = ?", guideKey);
    expect(recorded).toEqual([{ status: "skipped", last_error: guide.last_error }]);
  }, 120_000);

  // The amendment's journey holds its own thank-you back (three failed attempts, 2 + 4 + 8 s of
  // real backoff) so the old plan's thank-you reaches its turn first, the way a real amendment
  // lands while old mail waits behind the pacing.
  it("an amendment while old emails wait: the old plan's are skipped as superseded at their turn; a key the new plan keeps still goes out, re-planned", async () => {
    const d = futureBooking({ checkinInDays: 30, nights: 3 });
    const id = d.bookingId;
    await runLiteapi(d);
    const [oldGuide, thanks] = [`arrival_guide:${id}:${d.checkin}`, `thank_you:${id}`];
    expect(item(await outboxState(), thanks).status).toBe("queued");

    const [newCheckin, newCheckout] = [dateInDays(37), dateInDays(40)];
    const amend = liteapiEvent("booking.amendment", { bookingId: id, checkin: newCheckin, checkout: newCheckout });
    const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(amend.eventId));
    try {
      await startHeldBack(instance, amend.body, { held: `send thank_you ${id} v2`, reached: `send checkin_day ${id} v2` });

      // The old plan's guide (its key names the old check-in) and thank-you meet their turn.
      for (const key of [oldGuide, thanks]) {
        const state = await sendThrough(key);
        expect(item(state, key), key).toMatchObject({
          status: "skipped",
          last_error: "superseded by a newer journey version",
          attempts: 0,
        });
      }

      await instance.waitForStatus("complete");
      const out = await instance.getOutput();
      expect(out.failed).toEqual([]);
      expect(out.emails).toContainEqual([thanks, "already_claimed"]);
    } finally {
      await instance.dispose();
    }
    // The new plan's thank-you (same key) was put back in line with the new intent, and goes out.
    const v = await runInDurableObject(outboxStub(), async (_o, state) =>
      state.storage.sql.exec("SELECT journey_version FROM queue WHERE dedupe_key = ?", thanks).one(),
    );
    expect(v).toEqual({ journey_version: 2 });
    const state = await sendThrough(thanks);
    expect(item(state, thanks).status).toBe("sent");
    expect(item(state, `arrival_guide:${id}:${newCheckin}`).status).toBe("sent");
    const recorded = await rows("SELECT dedupe_key, status FROM emails WHERE booking_id = ? AND kind IN ('arrival_guide', 'thank_you') ORDER BY id", id);
    expect(recorded).toEqual([
      { dedupe_key: oldGuide, status: "skipped" },
      { dedupe_key: thanks, status: "sent" },
      { dedupe_key: `arrival_guide:${id}:${newCheckin}`, status: "sent" },
    ]);
  }, 120_000);
});
