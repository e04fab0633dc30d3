// A backlog the owner hears about before a guest does: at production pacing (150–160 s), 20 urgent
// guest emails ahead of a check-in-day note whose moment is 30 minutes away make the outbox
// forecast a miss (20 × 155 s ≈ 52 min) and alert the owner once, with the figures; the owner's
// catch-up (30 s for urgent and booking email) lets the note out in time (20 × 30 s = 10 min),
// while marketing keeps the normal gap after every send. Time is not moved: a gap "passes" by
// opening its slot in the outbox's state, and each slot the outbox records is checked against
// the send it follows (the fast slot 30–33 s after it, the normal slot 150–160 s after it), as is
// the alarm it arms.
import { runInDurableObject, SELF } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { OPERATOR, adminCookie, adminForm, adminPage, enqueueEmail, eventually, outboxState, outboxStub, queuedEmail, runOutbox, setOutboxState, unique } from "../e2e/helpers.mjs";

const MIN = 60_000;

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

/** The outbox's two slots (ms UTC; null when never set) and its armed alarm. */
async function slots() {
  return runInDurableObject(outboxStub(), async (_o, st) => {
    const v = (k) => st.storage.sql.exec("SELECT value FROM state WHERE key = ?", k).toArray()[0]?.value ?? null;
    return { next: v("next_slot_at_ms"), fast: v("fast_slot_at_ms"), alarm: await st.storage.getAlarm() };
  });
}

const clientSent = (state) => state.items.filter((i) => i.status === "sent" && i.audience === "client");
const newestSent = (state) => Math.max(...clientSent(state).map((i) => i.sent_at_ms));

/**
 * Moves the slots the outbox set (the normal one, and the fast one when set) on by the time that
 * passed since the newest send, as if that send had just happened; returns the slots. The gaps
 * the outbox chose are kept, and "before the slot" then holds however slowly the machine ran the
 * steps since the send (real time is never waited for, so it must not decide a check either).
 */
async function slotsAsIfJustSent(state) {
  const s = await slots();
  const passed = Math.max(0, Date.now() - newestSent(state));
  await setOutboxState("next_slot_at_ms", s.next + passed);
  if (s.fast > 0) await setOutboxState("fast_slot_at_ms", s.fast + passed);
  return slots();
}

/** The normal slot after the newest send: the production gap, 150–160 s (1 s slack: the slot is
 * counted from the end of the send, a few ms after its recorded time). */
function expectNormalGap(state, s) {
  const gap = s.next - newestSent(state);
  expect(gap).toBeGreaterThanOrEqual(150_000);
  expect(gap).toBeLessThanOrEqual(161_000);
}

/** The outbox page's catch-up form posted as the browser posts it; returns the redirect's URL. */
async function paceForm(cookie, fields, expectStatus = 303) {
  const r = await adminForm(cookie, "/admin/queue", "/admin/queue/pace", fields);
  expect(r.status, await r.clone().text()).toBe(expectStatus);
  return expectStatus === 303 ? new URL(r.headers.get("location"), "https://engine.test") : r.text();
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
    // Booking email behind the urgent line: the catch-up carries it too.
    const booking = await enqueueEmail("guest-booking@example.com");
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
    const rendered = await queuedEmail(alertKey);
    expect(rendered.subject).toBe("Outbox backlog: 1 time-bound guest emails forecast to miss their moment");
    expect(rendered.text).toContain(`${note} (booking none): #21 in line`);
    expect(rendered.text).toMatch(/- urgent: 21 queued, drained by .* UTC \(in (5[4-9]|6\d) min\)/);
    expect(rendered.text).toContain("every 155 s");
    expect(state.forecast.misses.map((m) => m.dedupeKey)).toEqual([note]);
    expect(state.forecast.drains[0]).toMatchObject({ rank: 0, queued: 21 });
    expect(state.forecast.drains[1]).toMatchObject({ rank: 1, queued: 1 });
    expect(state.forecast.drains[3]).toMatchObject({ rank: 3, queued: 2 });

    // No catch-up: an open fast lane carries nothing; the outbox waits for the normal slot,
    // 150–160 s after the send, and arms its alarm there.
    let s = await slots();
    expectNormalGap(state, s);
    expect(s.alarm).toBe(s.next);
    const sentAlone = clientSent(state).length;
    s = await slotsAsIfJustSent(state);
    await setOutboxState("fast_slot_at_ms", 0);
    state = await runOutbox();
    expect(clientSent(state)).toHaveLength(sentAlone);
    expect((await slots()).alarm).toBe(s.next);

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
    // The fast lane, gap after gap: after each send the fast slot is 30–33 s on and the alarm is
    // armed there; an alarm before it sends nothing; once it passed (opened here), one urgent or
    // booking email goes, never marketing, and the normal slot is again 150–160 s after the send.
    let gaps = 0;
    for (;;) {
      state = await outboxState();
      s = await slots();
      const before = clientSent(state).length;
      const fastGap = s.fast - newestSent(state);
      expect(fastGap).toBeGreaterThanOrEqual(30_000);
      expect(fastGap).toBeLessThanOrEqual(34_000);
      expectNormalGap(state, s);
      expect(s.alarm).toBe(s.fast);
      // Before the fast slot: nothing.
      await slotsAsIfJustSent(state);
      state = await runOutbox();
      expect(clientSent(state)).toHaveLength(before);
      // The fast gap passed (the normal slot still 2 minutes away): one send.
      await setOutboxState("fast_slot_at_ms", Date.now() - 1);
      state = await runOutbox();
      const sent = clientSent(state);
      expect(sent.length).toBe(before + 1);
      gaps += 1;
      for (const m of marketing) expect(state.items.find((i) => i.dedupe_key === m).status).toBe("queued");
      if (state.items.find((i) => i.dedupe_key === booking).status === "sent") break;
      expect(gaps).toBeLessThan(25);
    }
    // 19 more urgent emails, then the note, then the booking email: 21 sends at the catch-up pace
    // (the first at once, then a gap of 30–33 s before each of the others), the note the 20th,
    // well inside its 30 minutes.
    expect(state.items.find((i) => i.dedupe_key === note).status).toBe("sent");
    const fastSends = clientSent(state).length - sentBeforePace;
    expect(fastSends).toBe(21);
    const noteAt = state.items.find((i) => i.dedupe_key === note).sent_at_ms;
    expect(clientSent(state).filter((i) => i.sent_at_ms <= noteAt).length - sentBeforePace).toBe(20);
    expect(19 * 33_000).toBeLessThan(30 * MIN);

    // Only marketing left: the fast lane carries none of it, and the outbox's alarm waits for the
    // normal slot, 150–160 s after the last send.
    expectNormalGap(state, await slots());
    s = await slotsAsIfJustSent(state);
    await setOutboxState("fast_slot_at_ms", 0);
    state = await runOutbox();
    for (const m of marketing) expect(state.items.find((i) => i.dedupe_key === m).status).toBe("queued");
    expect((await slots()).alarm).toBe(s.next);

    // The owner's admin page, as a browser posts its forms: a gap outside the bounds is refused
    // and changes nothing; the running catch-up is shown; stop, start again at 60 s, stop.
    const cookie = await adminCookie();
    expect(await adminPage("/admin/queue", cookie)).toContain('id="catch-up-running"');
    const refused = await paceForm(cookie, { gap_s: "5", hours: "1" }, 400);
    expect(refused).toContain("Catch-up refused");
    expect((await outboxState()).catchUp.gapMs).toBe(30_000);
    let back = await paceForm(cookie, { stop: "1" });
    expect(back.pathname).toBe("/admin/queue");
    expect(back.searchParams.get("done")).toBe("catch_up_stopped");
    expect((await outboxState()).catchUp).toBe(null);
    expect(await adminPage("/admin/queue", cookie)).not.toContain('id="catch-up-running"');
    back = await paceForm(cookie, { gap_s: "60", hours: "2" });
    expect(back.searchParams.get("done")).toBe("catch_up");
    const started = (await outboxState()).catchUp;
    expect(started.gapMs).toBe(60_000);
    expect(started.untilMs - Date.now()).toBeGreaterThan(2 * 3_600_000 - MIN);
    expect(started.untilMs - Date.now()).toBeLessThanOrEqual(2 * 3_600_000);
    expect(await adminPage("/admin/queue", cookie)).toContain('id="catch-up-running"');
    back = await paceForm(cookie, { stop: "1" });
    expect(back.searchParams.get("done")).toBe("catch_up_stopped");

    // Stopped: the normal pace only. A new urgent email with the fast lane open waits for the
    // normal slot; when that opens, it goes first and the next slot is 150–160 s on.
    const stop = await SELF.fetch("https://engine.test/admin/outbox/pace", { method: "POST", headers: OPERATOR, body: JSON.stringify({ stop: true }) });
    expect((await stop.json()).catchUp).toBe(null);
    expect((await outboxState()).catchUp).toBe(null);
    const late = await urgent("traveller-late@example.com");
    await slotsAsIfJustSent(state);
    await setOutboxState("fast_slot_at_ms", 0);
    state = await runOutbox();
    expect(state.items.find((i) => i.dedupe_key === late).status).toBe("queued");
    s = await slots();
    expect(s.alarm).toBe(s.next);
    await setOutboxState("next_slot_at_ms", 0);
    state = await runOutbox();
    expect(state.items.find((i) => i.dedupe_key === late).status).toBe("sent");
    expectNormalGap(state, await slots());
    for (const m of marketing) expect(state.items.find((i) => i.dedupe_key === m).status).toBe("queued");
  });
});
