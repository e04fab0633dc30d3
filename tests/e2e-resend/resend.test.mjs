// Resend as the main provider (vitest.resend.config.mjs: MAIN_PROVIDER = "resend", RESEND_BASE_URL
// = the fake Resend API of tests/e2e/global-setup.mjs), inside workerd with the real outbox Durable
// Object and D1. The SMTP failover server here refuses the engine's password.
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { endBackoff, enqueueEmail, eventually, failUntilDead, item, killMidSendThenRetry, keyStartingWith, outboxState, outboxStub, queuedEmail, rows, runOutbox, setOutboxState, tries, turn, unique } from "../e2e/helpers.mjs";

async function resendLog() {
  return (await fetch(`${env.RESEND_API}/_test/log`)).json();
}

describe("Resend as the main provider", () => {
  it("sends with the bearer key and the dedupe key as Idempotency-Key", async () => {
    const to = `${unique("ok")}@example.com`;
    const key = await enqueueEmail(to);
    const state = await turn(key);
    const it = item(state, key);
    expect(it).toMatchObject({ status: "sent", provider: "resend", attempts: 1 });
    const log = await resendLog();
    const reqs = log.requests.filter((r) => r.to === to);
    expect(reqs).toHaveLength(1);
    expect(reqs[0]).toMatchObject({ key, authorization: "Bearer test-resend-key" });
    expect(reqs[0].body).toMatchObject({ from: "Example Trips <bookings@example.com>", to: [to], subject: "Your stay is confirmed" });
    expect(it.provider_message_id).toBe(log.deliveries.find((d) => d.to === to).id);
  });

  it("carries each calendar part as an attachment: its file name, text/calendar with its method, the .ics in base64", async () => {
    const to = `${unique("ics")}@example.com`;
    // A whole CANCEL part as the engine writes one (every calendar part of the run is read by
    // both parsers after the file, tests/e2e/calendars-parse.mjs).
    const ics = [
      "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Bookings//Calendar//EN", "CALSCALE:GREGORIAN", "METHOD:CANCEL",
      "BEGIN:VEVENT", "UID:0c5f1a3e-6b1d-8a2f-9e4d-3b7a2c1d0e9f", "DTSTAMP:20260528T202640Z", "SEQUENCE:2",
      "ORGANIZER;CN=\"Example Trips\":mailto:bookings@example.com",
      "ATTENDEE;CN=\"Testa Guestington\";ROLE=REQ-PARTICIPANT:mailto:guest@example.com",
      "DTSTART;VALUE=DATE:20260612", "DTEND;VALUE=DATE:20260615", "SUMMARY:Example Harbour Hotel", "TRANSP:TRANSPARENT", "STATUS:CANCELLED", "END:VEVENT",
      "END:VCALENDAR", "",
    ].join("\r\n");
    const key = await enqueueEmail(to, "Your booking is cancelled.", {
      calendars: [{ method: "CANCEL", file_name: "stay.ics", uid: "0c5f1a3e-6b1d-8a2f-9e4d-3b7a2c1d0e9f", ics }],
    });
    expect(item(await turn(key), key)).toMatchObject({ status: "sent", provider: "resend" });
    const [req] = (await resendLog()).requests.filter((r) => r.to === to);
    expect(req.body.attachments).toEqual([
      { filename: "stay.ics", content: btoa(ics), content_type: "text/calendar; charset=utf-8; method=CANCEL" },
    ]);
  });

  it("a lost answer is retried with the same Idempotency-Key: Resend answers the first result, one delivery, status sent", async () => {
    const to = `${unique("lost")}+lost-response-once@example.com`;
    const key = await enqueueEmail(to);
    let state = await turn(key);
    expect(item(state, key)).toMatchObject({ status: "waiting", maybe_handed_to: "resend" });
    await endBackoff(key);
    state = await turn(key, 2);
    const it = item(state, key);
    expect(it).toMatchObject({ status: "sent", attempts: 2 });
    expect(tries(state, it)).toEqual([
      ["resend", "failed"],
      ["resend", "sent"],
    ]);
    const log = await resendLog();
    expect(log.requests.filter((r) => r.to === to).map((r) => r.key)).toEqual([key, key]);
    expect(log.deliveries.filter((d) => d.to === to)).toHaveLength(1);
    expect(it.provider_message_id).toBe(log.deliveries.find((d) => d.to === to).id);
  });

  it("killed between Resend's acceptance and our record: the restart retries the same key and the email ends sent, delivered once", async () => {
    const to = `${unique("kill")}+slow-once@example.com`;
    await setOutboxState("next_slot_at_ms", 0);
    const key = await enqueueEmail(to);
    // The enqueue armed the alarm; the runtime runs it, and it hangs after the hand-over.
    await eventually(async () => expect((await resendLog()).deliveries.filter((d) => d.to === to)).toHaveLength(1));
    // Killed mid-alarm; the platform retries the interrupted alarm on a fresh instance.
    const state = await killMidSendThenRetry(key, "sent");
    expect(tries(state, item(state, key))).toEqual([
      ["resend", "interrupted"],
      ["resend", "sent"],
    ]);
    const log = await resendLog();
    expect(log.requests.filter((r) => r.to === to).map((r) => r.key)).toEqual([key, key]);
    expect(log.deliveries.filter((d) => d.to === to)).toHaveLength(1);
  });

  it("rate_limit_exceeded waits at least the 60 s floor (Retry-After 2 s is below it)", async () => {
    const key = await enqueueEmail(`${unique("rl")}+rate-limit@example.com`);
    const before = Date.now();
    const state = await turn(key);
    const it = item(state, key);
    expect(it).toMatchObject({ status: "waiting", attempts: 1 });
    expect(it.last_error).toMatch(/rate_limit_exceeded/);
    expect(it.not_before_ms - before).toBeGreaterThanOrEqual(60_000);
  });

  it("an error name Resend never documented is retried with backoff, never dead on first sight; the attempt ceiling makes a dead letter the owner hears of", async () => {
    const to = `${unique("new")}+unknown-error@example.com`;
    const key = await enqueueEmail(to);
    await failUntilDead(key, { provider: "resend", error: /brand_new_error/ });
    expect((await resendLog()).requests.filter((r) => r.to === to)).toHaveLength(6);
    const state = await runOutbox();
    expect(item(state, `owner_email_failed:${key}`)?.status).toBe("sent");
    expect(await rows("SELECT email FROM suppressions WHERE email = ?", to.toLowerCase())).toEqual([]);
  });

  it("invalid_to_address drops the email, alerts the owner and suppresses the address for everything", async () => {
    const to = `${unique("bad")}+invalid@example.com`;
    const key = await enqueueEmail(to);
    let state = await turn(key);
    expect(item(state, key)).toMatchObject({ status: "dropped", attempts: 1 });
    expect(item(state, key).last_error).toMatch(/invalid_to_address/);
    state = await runOutbox();
    expect(item(state, `owner_email_failed:${key}`)?.status).toBe("sent");
    expect(await rows("SELECT reason, source FROM suppressions WHERE email = ?", to.toLowerCase())).toEqual([
      { reason: "hard_bounce", source: "resend" },
    ]);
    // A later booking email to the same address is skipped at send time, never handed over.
    const later = await enqueueEmail(to);
    state = await turn(later);
    expect(item(state, later)).toMatchObject({ status: "skipped", attempts: 0, last_error: "suppressed: hard_bounce" });
    expect((await resendLog()).requests.filter((r) => r.to === to)).toHaveLength(1);
  });

  it("daily quota → fail over to SMTP; SMTP refuses our password → SMTP paused and the owner alerted; both resume after their reset", async () => {
    const to = `${unique("quota")}+daily-quota@example.com`;
    const key = await enqueueEmail(to);
    // One alarm (runOutbox would wait for the owner alert, which cannot go out while both
    // providers are paused).
    await setOutboxState("next_slot_at_ms", 0);
    let state = await eventually(async () => {
      await runDurableObjectAlarm(outboxStub());
      const s = await outboxState();
      expect(item(s, key).status).toBe("waiting");
      return s;
    });
    let it = item(state, key);
    expect(tries(state, it)).toEqual([
      ["resend", "failed"],
      ["smtp", "failed"],
    ]);
    expect(it.status).toBe("waiting");
    expect(it.budget_from).toBe(2); // neither provider's problem counts against the email
    const dayMs = 86_400_000;
    expect(state.mainPausedUntilMs).toBe((Math.floor(Date.now() / dayMs) + 1) * dayMs);
    expect(state.smtpPausedUntilMs).toBeGreaterThan(Date.now() + 3_000_000);
    expect(it.not_before_ms).toBe(Math.min(state.mainPausedUntilMs, state.smtpPausedUntilMs));
    const smtpFailure = state.attempts.find((t) => t.seq === it.seq && t.provider === "smtp");
    expect(smtpFailure.error).toMatch(/535/);
    // Both routes that carry guest mail are paused: the owner's alert takes the owner route (a
    // send_email binding restricted to the owner's address). The key ends with the fault (the
    // refused AUTH and its codes).
    const day = new Date().toISOString().slice(0, 10);
    const alertKey = keyStartingWith(state, `owner_provider_paused:smtp:${day}:auth-535`);
    state = await eventually(async () => {
      await runDurableObjectAlarm(outboxStub());
      const s = await outboxState();
      expect(item(s, alertKey)).toMatchObject({ status: "sent", provider: "owner_route" });
      return s;
    });

    // The main provider's reset passes: the email is tried by Resend again.
    await setOutboxState("main_paused_until_ms", Date.now() - 1);
    await endBackoff(key);
    state = await turn(key);
    it = item(state, key);
    // Still refused by the fake quota for this address: it waits again, SMTP still paused.
    expect(it.status).toBe("waiting");
    const other = await enqueueEmail(`${unique("after-reset")}@example.com`);
    await setOutboxState("main_paused_until_ms", Date.now() - 1);
    state = await turn(other);
    expect(item(state, other)).toMatchObject({ status: "sent", provider: "resend", attempts: 1 });
    // The alert went once, by the owner route, never again by Resend.
    expect((await resendLog()).requests.filter((r) => r.to === "owner@example.com" && r.key === alertKey)).toHaveLength(0);
    const alert = await queuedEmail(alertKey);
    expect(alert.text).toMatch(/refused the engine's credentials/);
  });
});
