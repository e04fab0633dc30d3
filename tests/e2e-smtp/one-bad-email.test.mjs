// One bad email never stops the next: a relay's verdict on one message stays with that message.
// Against the scripted server (tests/e2e/scripted-smtp.mjs: `+content-refused@` answers every
// final dot with `550 5.7.1 Message content rejected by policy`), inside workerd with the real
// outbox (vitest.smtp.config.mjs). The main provider is paused for every test, so SMTP carries
// every email at production pacing (150–160 s, slots passed by the test). The same cases run
// against a real Postfix in tests/e2e-postfix/.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, it, expect, beforeEach } from "vitest";
import {
  enqueueEmail, enqueueOwnerAlert, eventually, item, outboxState, outboxStub, passClientGap, queuedEmail, rows, runOutbox,
  scriptedSmtpCount, smtpOnlyOutbox, scriptedSmtpRefuseSender, setOutboxState, storeBookingOf, today, tries, unique,
} from "../e2e/helpers.mjs";

const REFUSAL = "550 5.7.1 Message content rejected by policy";

/** One alarm, without passing the client gap. */
async function alarm() {
  await runDurableObjectAlarm(outboxStub());
  return outboxState();
}

describe("one bad email never stops the next (scripted relay)", () => {
  beforeEach(async () => {
    // Each case starts with an empty line and an empty route history (storage is shared by the
    // cases of a file).
    await smtpOnlyOutbox();
    await scriptedSmtpRefuseSender(null);
  });

  it("a content verdict on one message: the four guests behind it go in their slots, the refused one is a dead letter with an alert, the guest not suppressed, the route never paused", async () => {
    const bad = `${unique("bad")}+content-refused@example.com`.toLowerCase();
    const badKey = await enqueueEmail(bad);
    const good = [];
    for (let i = 0; i < 4; i++) {
      const to = `${unique(`good${i}`)}@example.com`.toLowerCase();
      good.push({ to, key: await enqueueEmail(to) });
    }

    // One slot: the relay refuses it after the data; it is set aside (not paused, not dropped)
    // and the next guest goes at once, ahead of pacing, on the same route: the probe.
    let state = await passClientGap();
    state = await eventually(async () => {
      const s = await runOutbox();
      expect(item(s, good[0].key).status).toBe("sent");
      return s;
    });
    expect(item(state, good[0].key).provider).toBe("smtp");
    expect(tries(state, item(state, badKey))).toEqual([["smtp", "failed"]]);
    expect(state.attempts.find((t) => t.seq === item(state, badKey).seq).error).toContain(REFUSAL);
    // It was accepted: the first email alone is refused. A dead letter, the owner told.
    expect(item(state, badKey)).toMatchObject({ status: "dead", attempts: 1 });
    expect(item(state, badKey).last_error).toMatch(/smtp refused this email alone: .*550 5\.7\.1 Message content rejected by policy/);
    const alertKey = `owner_email_failed:${badKey}`;
    expect(item(state, alertKey)?.status).toBe("sent");
    const alert = await queuedEmail(alertKey);
    expect(alert.text).toContain(REFUSAL);
    expect(alert.text).toContain(`/admin/email?key=${encodeURIComponent(badKey)}`);
    // The probe moved the pacing on like any client send: the next guest waits for its slot.
    expect(state.nextSlotAtMs).toBeGreaterThan(Date.now() + 140_000);
    expect(item(state, good[1].key).status).toBe("queued");

    // The other three, one per slot.
    for (const g of good.slice(1)) {
      state = await passClientGap();
      expect(item(state, g.key).status).toBe("sent");
    }
    for (const g of good) expect(await scriptedSmtpCount(g.to)).toEqual({ transactions: 1, accepted: 1 });
    expect(await scriptedSmtpCount(bad)).toEqual({ transactions: 1, accepted: 0 });
    expect(await rows("SELECT email FROM suppressions WHERE email = ?", bad)).toEqual([]);
    expect(state.smtpPausedUntilMs ?? 0).toBeLessThan(Date.now());
    expect(state.routeHistory.filter((e) => e.event === "paused")).toEqual([]);
    expect(state.routeHistory.find((e) => e.event === "refused_alone")?.detail).toContain(badKey);
    // No provider-paused alert at all.
    expect(state.items.filter((i) => i.dedupe_key.startsWith("owner_provider_paused:smtp:"))).toEqual([]);
    // The owner can redrive it (after changing what the verdict was about).
    const redrive = await outboxStub().fetch("https://outbox/redrive", { method: "POST", body: JSON.stringify({ dedupeKey: badKey }) });
    expect(redrive.status).toBe(200);
  });

  it("the same verdict on every message: the route pauses after the probe, both emails keep their places, nothing lost, one alert", async () => {
    const a = `${unique("spam-a")}+content-refused@example.com`.toLowerCase();
    const b = `${unique("spam-b")}+content-refused@example.com`.toLowerCase();
    const aKey = await enqueueEmail(a);
    const bKey = await enqueueEmail(b);
    // Bookings of two different sources: the second shares no supplier or guest text with the
    // first (emails of one booking or one partner would only set each other aside).
    await storeBookingOf(aKey, a, "liteapi");
    await storeBookingOf(bKey, b, "duffel");
    // The first is set aside, the probe (the second) meets the same refusal: the route is ours
    // to fix.
    await passClientGap();
    let state = await eventually(async () => {
      const s = await alarm();
      expect(s.smtpPausedUntilMs).toBeGreaterThan(Date.now() + 3_000_000);
      return s;
    });
    for (const key of [aKey, bKey]) {
      const it = item(state, key);
      // Not counted against either email: both keep their attempt budgets.
      expect(it).toMatchObject({ status: "waiting", attempts: 1, budget_from: 1 });
    }
    expect(state.routeHistory.map((e) => e.event)).toEqual(expect.arrayContaining(["refused_twice", "paused"]));
    const alertKey = `owner_provider_paused:smtp:${today()}:end-of-data-550-5.7.1`;
    expect(item(state, alertKey)).toBeTruthy();
    const alert = await queuedEmail(alertKey);
    expect(alert.text).toContain(REFUSAL);
    expect(alert.text).toContain("refused the same way");
    for (const to of [a, b]) expect(await rows("SELECT email FROM suppressions WHERE email = ?", to)).toEqual([]);

    // Resumed by hand with nothing fixed: the same pair goes first, is refused again, the route
    // pauses again — still one alert for the route, fault and day; still nothing lost.
    const resumed = await outboxStub().fetch("https://outbox/pause", { method: "POST", body: JSON.stringify({ provider: "smtp", untilMs: 0 }) });
    expect(resumed.status).toBe(200);
    await passClientGap();
    state = await eventually(async () => {
      const s = await alarm();
      expect(s.smtpPausedUntilMs).toBeGreaterThan(Date.now());
      for (const key of [aKey, bKey]) expect(item(s, key)).toMatchObject({ status: "waiting", attempts: 2, budget_from: 2 });
      return s;
    });
    expect(state.items.filter((i) => i.dedupe_key.startsWith(`owner_provider_paused:smtp:${today()}:end-of-data`))).toHaveLength(1);
    expect(await scriptedSmtpCount(a)).toEqual({ transactions: 2, accepted: 0 });
    expect(await scriptedSmtpCount(b)).toEqual({ transactions: 2, accepted: 0 });
  });

  it("a configuration pause lifts at the next look once the settings it blamed changed, without a click", async () => {
    await scriptedSmtpRefuseSender("553 5.7.1 <bookings@example.com>: Sender address rejected: not owned by user engine");
    const to = `${unique("lift")}@example.com`.toLowerCase();
    const key = await enqueueEmail(to);
    let state = await eventually(async () => {
      await setOutboxState("next_slot_at_ms", 0);
      const s = await alarm();
      expect(item(s, key).status).toBe("waiting");
      return s;
    });
    expect(state.smtpPausedUntilMs).toBeGreaterThan(Date.now() + 3_000_000);
    // The pause recorded the route's settings (a fingerprint, and a byte per setting).
    const recorded = await runInDurableObject(outboxStub(), async (_o, st) =>
      Object.fromEntries(st.storage.sql.exec("SELECT key, value FROM state WHERE key LIKE 'smtp_pause_%'").toArray().map((r) => [r.key, r.value])),
    );
    expect(recorded.smtp_pause_cause).toBe(3);
    expect(typeof recorded.smtp_pause_fingerprint).toBe("number");
    // A look with the same settings changes nothing (the sweeper's five-minute /rearm).
    await outboxStub().fetch("https://outbox/rearm", { method: "POST" });
    expect((await outboxState()).smtpPausedUntilMs).toBeGreaterThan(Date.now());
    // The operator deploys a new SMTP password: here the recorded fingerprint is made that of
    // other settings (the whole, and the byte of SMTP_PASSWORD, the fifth setting), which is the
    // same comparison the outbox makes after a deploy.
    const flip = (value, bit) => Number(BigInt(value) ^ (1n << BigInt(bit)));
    await setOutboxState("smtp_pause_fingerprint", flip(recorded.smtp_pause_fingerprint, 0));
    await setOutboxState("smtp_pause_settings", flip(recorded.smtp_pause_settings, 32));
    await scriptedSmtpRefuseSender(null);
    await outboxStub().fetch("https://outbox/rearm", { method: "POST" });
    state = await outboxState();
    expect(state.smtpPausedUntilMs ?? 0).toBeLessThan(Date.now());
    const lifted = state.routeHistory.find((e) => e.event === "lifted_settings_changed");
    expect(lifted?.detail).toBe("the pause blamed the route's settings, and SMTP_PASSWORD changed since");
    // Back in line at once (the alarm the lift armed may already be sending it).
    expect(["queued", "sending", "sent"]).toContain(item(state, key).status);
    const repairs = await rows("SELECT kind, subject, reason FROM repairs WHERE kind = 'route_lifted'");
    expect(repairs).toEqual([{ kind: "route_lifted", subject: "smtp", reason: expect.stringContaining("SMTP_PASSWORD changed") }]);
    state = await eventually(async () => {
      const s = await passClientGap();
      expect(item(s, key)).toMatchObject({ status: "sent", provider: "smtp" });
      return s;
    });
    expect(await scriptedSmtpCount(to)).toEqual({ transactions: 1, accepted: 1 });
  });

  it("owner alerts reach the owner by the owner route while every guest route is paused; guest mail waits", async () => {
    await setOutboxState("smtp_paused_until_ms", Date.now() + 3_600_000);
    const guest = await enqueueEmail(`${unique("waits")}@example.com`.toLowerCase());
    const alertKey = `owner_test_alert:${unique("a")}`;
    await enqueueOwnerAlert(alertKey, "owner_provider_paused", "Email provider paused: smtp", "Every route is paused.");
    const state = await eventually(async () => {
      const s = await alarm();
      expect(item(s, alertKey).status).toBe("sent");
      return s;
    });
    expect(item(state, alertKey).provider).toBe("owner_route");
    expect(tries(state, item(state, alertKey))).toEqual([["owner_route", "sent"]]);
    // Guest mail never takes the owner route.
    expect(["queued", "waiting"]).toContain(item(state, guest).status);
    expect(state.attempts.filter((t) => t.seq === item(state, guest).seq)).toEqual([]);
  });
});
