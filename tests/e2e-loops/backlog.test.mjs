// A backlog the owner hears about before a guest does: at production pacing (150–160 s), 20 urgent
// guest emails ahead of a check-in-day note whose moment is 30 minutes away make the outbox
// forecast a miss (20 × 155 s ≈ 52 min) and alert the owner once, with the figures; the owner's
// catch-up (30 s for urgent and booking email) lets the note out in time (20 × 30 s = 10 min),
// while marketing keeps the normal gap after every send.
import { runInDurableObject, SELF } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { enqueueEmail, eventually, outboxState, outboxStub, runOutbox, setOutboxState, unique } from "../e2e/helpers.mjs";

const MIN = 60_000;
const OPERATOR = { authorization: "Bearer test-operator-token-0123456789abcdef", "content-type": "application/json" };

async function urgent(to) {
  const id = unique("BK_");
  const key = `flight_changed:${id}:chg`;
  await enqueueEmail(to, "Your flight changed.", {
    dedupeKey: key,
    kind: "flight_changed",
    rank: "urgent",
    bookingId: undefined,
    subject: "Your flight changed",
    messageId: `<${id.toLowerCase()}@example.com>`,
  });
  return key;
}

async function email(key) {
  const r = await outboxStub().fetch(`https://outbox/email?dedupe_key=${encodeURIComponent(key)}`);
  return r.status === 200 ? r.json() : null;
}

describe("backlog forecast and catch-up", () => {
  it("a check-in note forecast to miss its moment: one owner alert with the figures; the catch-up lets it out in time and never speeds marketing", async () => {
    const backlog = [];
    for (let i = 0; i < 21; i++) backlog.push(await urgent(`traveller${i}@example.com`));
    const noteId = unique("BK_");
    const moment = Date.now() + 30 * MIN;
    const note = `checkin_day:${noteId}`;
    await enqueueEmail("guest-note@example.com", "Today is check-in day.", {
      dedupeKey: note,
      kind: "checkin_day",
      rank: "urgent",
      bookingId: undefined,
      intent: { expiresAtMs: moment },
      subject: "Today: check-in",
      messageId: `<${noteId.toLowerCase()}@example.com>`,
    });
    const marketing = [];
    for (let i = 0; i < 2; i++) {
      const key = `marketing:spring:${unique("r")}@example.com`;
      marketing.push(key);
      await enqueueEmail(`reader${i}@example.com`, "Spring offers.", {
          dedupeKey: key,
          kind: "marketing",
          rank: "marketing",
          bookingId: undefined,
          subject: "Spring offers",
        });
    }

    // One alarm: the idle outbox sends the first urgent email, then forecasts the rest.
    let state = await runOutbox();
    const day = new Date().toISOString().slice(0, 10);
    const alertKey = `owner_backlog:${day}`;
    const alert = state.items.find((i) => i.dedupe_key === alertKey);
    expect(alert?.status).toBe("sent");
    const rendered = await email(alertKey);
    expect(rendered.subject).toBe("Outbox backlog: 1 time-bound guest emails forecast to miss their moment");
    expect(rendered.text).toContain(`${note} (booking none): #21 in line`);
    expect(rendered.text).toMatch(/- urgent: 21 queued, drained by .* UTC \(in (5[4-9]|6\d) min\)/);
    expect(rendered.text).toContain("every 155 s");
    expect(state.forecast.misses.map((m) => m.dedupeKey)).toEqual([note]);
    expect(state.forecast.drains[0]).toMatchObject({ rank: 0, queued: 21 });
    expect(state.forecast.drains[3]).toMatchObject({ rank: 3, queued: 2 });

    // Another alarm the same day: no second alert.
    await setOutboxState("next_slot_at_ms", 0);
    state = await runOutbox();
    expect(state.items.filter((i) => i.dedupe_key.startsWith("owner_backlog:"))).toHaveLength(1);

    // The owner allows a catch-up; the forecast sees the note out in time.
    const sentBeforePace = state.items.filter((i) => i.status === "sent" && i.audience === "client").length;
    const bad = await SELF.fetch("https://engine.test/admin/outbox/pace", { method: "POST", headers: OPERATOR, body: JSON.stringify({ gapMs: 5_000, durationMs: 3_600_000 }) });
    expect(bad.status).toBe(400);
    expect((await bad.json()).field).toBe("gapMs");
    const tooLong = await SELF.fetch("https://engine.test/admin/outbox/pace", { method: "POST", headers: OPERATOR, body: JSON.stringify({ gapMs: 30_000, durationMs: 7 * 3_600_000 }) });
    expect((await tooLong.json()).field).toBe("durationMs");
    const pace = await SELF.fetch("https://engine.test/admin/outbox/pace", { method: "POST", headers: OPERATOR, body: JSON.stringify({ gapMs: 30_000, durationMs: 3_600_000 }) });
    expect(pace.status).toBe(200);
    const paced = await pace.json();
    expect(paced.catchUp.gapMs).toBe(30_000);
    expect(paced.forecast.misses).toEqual([]);
    // The pace call re-arms the outbox at once: let that alarm run (it sends the first email of
    // the catch-up) and re-arm.
    await eventually(async () => {
      const info = await runInDurableObject(outboxStub(), async (_o, st) => st.storage.getAlarm());
      expect(info).not.toBe(null);
      expect((await outboxState()).items.some((i) => i.status === "sending")).toBe(false);
    });
    // The fast lane, gap after gap (each "30 s" passed by opening the lane; the normal slot stays
    // closed): one urgent email per gap, never marketing, the normal gap kept after every send.
    let gaps = 0;
    for (;;) {
      await setOutboxState("fast_slot_at_ms", 0);
      const before = (await outboxState()).items.filter((i) => i.status === "sent" && i.audience === "client").length;
      state = await runOutbox();
      const sent = state.items.filter((i) => i.status === "sent" && i.audience === "client");
      expect(sent.length).toBe(before + 1);
      gaps += 1;
      const newest = sent.reduce((a, b) => (a.sent_at_ms > b.sent_at_ms ? a : b));
      expect(state.nextSlotAtMs - newest.sent_at_ms).toBeGreaterThanOrEqual(150_000);
      for (const m of marketing) expect(state.items.find((i) => i.dedupe_key === m).status).toBe("queued");
      if (state.items.find((i) => i.dedupe_key === note).status === "sent") break;
      expect(gaps).toBeLessThan(25);
    }
    // 19 more urgent emails, then the note: 20 sends at the catch-up pace (the first at once, then
    // 19 gaps of 30 s = 9.5 min), inside its 30 minutes.
    const fastSends = state.items.filter((i) => i.status === "sent" && i.audience === "client").length - sentBeforePace;
    expect(fastSends).toBe(20);
    expect((fastSends - 1) * 30_000).toBeLessThan(30 * MIN);

    // Only marketing left: the fast lane carries none of it.
    await setOutboxState("fast_slot_at_ms", 0);
    state = await runOutbox();
    for (const m of marketing) expect(state.items.find((i) => i.dedupe_key === m).status).toBe("queued");

    // Stopped: the normal pace only.
    const stop = await SELF.fetch("https://engine.test/admin/outbox/pace", { method: "POST", headers: OPERATOR, body: JSON.stringify({ stop: true }) });
    expect((await stop.json()).catchUp).toBe(null);
    expect((await outboxState()).catchUp).toBe(null);
  });
});
