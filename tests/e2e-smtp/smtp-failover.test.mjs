// The SMTP failover against a server scripted per case (tests/e2e/scripted-smtp.mjs), inside workerd
// with the real outbox Durable Object and D1 (vitest.smtp.config.mjs). The main provider is paused
// for every test, so each email goes by SMTP. Each case counts the DATA transactions the server
// saw for its email: exactly one wherever the server answered the final dot, at most two (recorded
// `sent_possibly_twice`, the owner told) when the connection was lost after it.
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, it, expect, beforeEach, afterEach, afterAll } from "vitest";
import {
  adminCookie, adminPage, endBackoff, enqueueEmail, eventually, item, oneAlarm, operatorRoute, outboxState,
  outboxStub, queuedEmail, rows, runOutbox, scriptedSmtpCount, scriptedSmtpLog, scriptedSmtpRefuseSender,
  setOutboxState, today, tries, turn, unique,
} from "../e2e/helpers.mjs";

const OWNER = "owner@example.com";
const SENDER_REFUSED = "553 5.7.1 <bookings@example.com>: Sender address rejected: not owned by user engine";

/** The measured table: case, DATA transactions at the server, accepted by it, outcome. */
const measured = [];

describe("SMTP failover, one email, one hand-over", () => {
  beforeEach(async () => {
    await outboxState(); // the outbox creates its tables on first use
    // The main provider is out (as after its daily limit): SMTP carries every email.
    await setOutboxState("main_paused_until_ms", Date.now() + 86_400_000);
    await setOutboxState("smtp_paused_until_ms", null);
  });

  afterEach(async () => {
    await scriptedSmtpRefuseSender(null);
  });

  afterAll(() => {
    const lines = ["| reply to the final dot | DATA transactions | accepted by the server | outcome |", "|---|---|---|---|"];
    for (const m of measured) lines.push(`| ${m.name} | ${m.transactions} | ${m.accepted} | ${m.outcome} |`);
    console.log(`SMTP transactions per email (measured):\n${lines.join("\n")}`);
  });

  for (const [name, tag] of [
    ["bare `250`", "bare-250"],
    ["`250` with a bare LF", "lf-250"],
    ["a blank line, then `250 OK`", "blank-250"],
    ["multi-line `250-` … `250`", "multiline-250"],
    ["slow: `250` after 3 s (command limit 2 s, final-reply limit 8 s)", "slow-250"],
    ["`250 2.0.0 Ok: queued as …`", "plain"],
  ]) {
    it(`${name} is one hand-over: sent, one DATA transaction`, async () => {
      const to = `${unique("dot")}+${tag}@example.com`.toLowerCase();
      const key = await enqueueEmail(to);
      const state = await turn(key);
      const it = item(state, key);
      expect(it).toMatchObject({ status: "sent", attempts: 1, provider: "smtp" });
      expect(it.maybe_handed_to).toBeNull();
      expect(tries(state, it)).toEqual([["smtp", "sent"]]);
      expect(await scriptedSmtpCount(to)).toEqual({ transactions: 1, accepted: 1 });
      measured.push({ name, transactions: 1, accepted: 1, outcome: "`sent`, 1 attempt" });
    });
  }

  it("connection lost after the dot once: one more attempt, recorded sent_possibly_twice, the owner told", async () => {
    const to = `${unique("lost")}+lost-once@example.com`.toLowerCase();
    const key = await enqueueEmail(to);
    let state = await turn(key);
    expect(item(state, key)).toMatchObject({ status: "waiting", attempts: 1, maybe_handed_to: "smtp" });
    expect(item(state, key).last_error).toMatch(/end of data.*may have the message/);
    expect(await scriptedSmtpCount(to)).toEqual({ transactions: 1, accepted: 0 });

    await endBackoff(key);
    state = await turn(key, 2);
    const it = item(state, key);
    expect(it.status).toBe("sent_possibly_twice");
    expect(tries(state, it)).toEqual([
      ["smtp", "failed"],
      ["smtp", "sent_possibly_twice"],
    ]);
    const n = await scriptedSmtpCount(to);
    expect(n).toEqual({ transactions: 2, accepted: 1 });
    state = await runOutbox();
    expect(item(state, `owner_email_failed:${key}`)?.status).toBe("sent");
    const subjects = (await scriptedSmtpLog()).subjects[OWNER] ?? [];
    expect(subjects.filter((s) => s === "Email sent_possibly_twice: Your stay is confirmed")).toHaveLength(1);
    measured.push({ name: "connection closed after the dot, then `250`", ...n, outcome: "`sent_possibly_twice`, 2 attempts, owner alerted" });
  });

  it("connection lost after the dot every time: two transactions at most, never a loop", async () => {
    const to = `${unique("lost")}+lost-always@example.com`.toLowerCase();
    const key = await enqueueEmail(to);
    let state = await turn(key);
    expect(item(state, key)).toMatchObject({ status: "waiting", attempts: 1 });
    await endBackoff(key);
    state = await turn(key, 2);
    const it = item(state, key);
    expect(it.status).toBe("sent_possibly_twice");
    expect(it.last_error).toMatch(/handed over twice without a confirmation; not sent again/);
    // It is finished: more alarms and client slots send nothing more.
    await endBackoff(key);
    state = await turn(key, 2);
    state = await runOutbox();
    expect(item(state, key)).toMatchObject({ status: "sent_possibly_twice", attempts: 2 });
    const n = await scriptedSmtpCount(to);
    expect(n).toEqual({ transactions: 2, accepted: 0 });
    expect(item(state, `owner_email_failed:${key}`)?.status).toBe("sent");
    measured.push({ name: "connection closed after the dot, every time", ...n, outcome: "`sent_possibly_twice` (unconfirmed), 2 attempts, owner alerted" });
  });

  it("a refused sender leaves the guest unsuppressed and the email queued, pauses SMTP, tells the owner once; resumed, the mail goes out once", async () => {
    await scriptedSmtpRefuseSender(SENDER_REFUSED);
    const to = `${unique("sender")}@example.com`.toLowerCase();
    const key = await enqueueEmail(to);
    let state = await oneAlarm(key);
    let it = item(state, key);
    // Not dropped, not dead: waiting for a route (the main provider is paused too).
    expect(it.status).toBe("waiting");
    expect(it).toMatchObject({ attempts: 1, budget_from: 1 }); // our fault: the attempt does not count
    expect(it.last_error).toContain(SENDER_REFUSED);
    expect(tries(state, it)).toEqual([["smtp", "failed"]]);
    expect(state.smtpPausedUntilMs).toBeGreaterThan(Date.now() + 3_000_000);
    expect(await rows("SELECT email FROM suppressions WHERE email = ?", to)).toEqual([]);
    expect(await scriptedSmtpCount(to)).toEqual({ transactions: 0, accepted: 0 });
    // Every guest route is paused: the owner's alert takes the owner route (a send_email binding
    // restricted to the owner's address); the admin shows that every route is paused.
    // One alert per route, fault and UTC day: the fault is the refused step and its codes.
    const alertKey = `owner_provider_paused:smtp:${today()}:mail-from-553-5.7.1`;
    state = await eventually(async () => {
      await runDurableObjectAlarm(outboxStub());
      const s = await outboxState();
      expect(item(s, alertKey)).toMatchObject({ status: "sent", provider: "owner_route" });
      return s;
    });
    const cookie = await adminCookie();
    expect(await adminPage("/admin", cookie)).toContain('id="all-routes-paused"');

    // The owner fixes the sender and resumes SMTP through the operator API.
    await scriptedSmtpRefuseSender(null);
    const r = await operatorRoute("smtp", "resume");
    expect(r.status).toBe(200);
    const answer = await r.json();
    expect(answer).toMatchObject({ provider: "smtp", pausedUntilMs: null });
    expect(answer.released).toBeGreaterThanOrEqual(1);
    state = await turn(key, 2);
    it = item(state, key);
    expect(it).toMatchObject({ status: "sent", attempts: 2, provider: "smtp" });
    const n = await scriptedSmtpCount(to);
    expect(n).toEqual({ transactions: 1, accepted: 1 });
    // The alert went once, by the owner route, not by the paused SMTP relay.
    const alerts = ((await scriptedSmtpLog()).subjects[OWNER] ?? []).filter((s) => s === "Email provider paused: smtp");
    expect(alerts).toHaveLength(0);
    expect(state.items.filter((i) => i.dedupe_key === alertKey)).toHaveLength(1);
    const alertText = await queuedEmail(alertKey);
    expect(alertText.text).toContain(SENDER_REFUSED);
    expect(alertText.text).toContain("No guest was suppressed");
    expect(await rows("SELECT email FROM suppressions WHERE email = ?", to)).toEqual([]);
    expect(await adminPage("/admin", cookie)).not.toContain('id="all-routes-paused"');
    measured.push({ name: "MAIL FROM refused `553 5.7.1`, then resumed", ...n, outcome: "`waiting` (route paused, guest not suppressed), `sent` once after the resume" });
  });

  it("DMARC refusal at the dot is ours: SMTP paused, the email waits; resumed from the admin page, it goes out once", async () => {
    const to = `${unique("dmarc")}+dmarc-once@example.com`.toLowerCase();
    const key = await enqueueEmail(to);
    let state = await oneAlarm(key);
    let it = item(state, key);
    expect(it.status).toBe("waiting");
    expect(it.last_error).toMatch(/550 5\.7\.26 Unauthenticated email/);
    expect(state.smtpPausedUntilMs).toBeGreaterThan(Date.now());
    expect(await rows("SELECT email FROM suppressions WHERE email = ?", to)).toEqual([]);
    expect(await scriptedSmtpCount(to)).toEqual({ transactions: 1, accepted: 0 });

    const cookie = await adminCookie();
    const page = await adminPage("/admin/queue", cookie);
    const csrf = /name="csrf" value="([0-9a-f]+)"/.exec(page)[1];
    const resumed = await fetchAdminForm("/admin/queue/provider", cookie, { csrf, provider: "smtp", action: "resume" });
    expect(resumed.status).toBe(303);
    state = await runOutbox();
    state = await turn(key, 2);
    it = item(state, key);
    expect(it).toMatchObject({ status: "sent", attempts: 2 });
    const n = await scriptedSmtpCount(to);
    expect(n).toEqual({ transactions: 2, accepted: 1 });
    measured.push({ name: "`550 5.7.26` (DMARC) to the dot, then resumed", ...n, outcome: "refused copy not delivered; `sent` once after the resume" });
  });

  it("an unknown mailbox (550 5.1.1 to RCPT TO) is the recipient's: dropped, suppressed, no transaction", async () => {
    const to = `${unique("gone")}+unknown-user@example.com`.toLowerCase();
    const key = await enqueueEmail(to);
    let state = await turn(key);
    expect(item(state, key)).toMatchObject({ status: "dropped", attempts: 1 });
    expect(item(state, key).last_error).toMatch(/550 5\.1\.1/);
    expect(state.smtpPausedUntilMs ?? 0).toBeLessThan(Date.now());
    expect(await rows("SELECT reason, source FROM suppressions WHERE email = ?", to)).toEqual([{ reason: "hard_bounce", source: "smtp" }]);
    const n = await scriptedSmtpCount(to);
    expect(n).toEqual({ transactions: 0, accepted: 0 });
    state = await runOutbox();
    expect(item(state, `owner_email_failed:${key}`)?.status).toBe("sent");
    measured.push({ name: "RCPT TO refused `550 5.1.1` (no DATA)", ...n, outcome: "`dropped`, address suppressed, owner alerted" });
  });
});

async function fetchAdminForm(path, cookie, fields) {
  const { SELF } = await import("cloudflare:test");
  return SELF.fetch(`https://engine.test${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: "https://engine.test" },
    body: new URLSearchParams(fields),
  });
}
