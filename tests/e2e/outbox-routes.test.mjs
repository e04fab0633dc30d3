// Whose fault a main-provider error is, and a paused route made visible: inside workerd with the
// real outbox Durable Object, the wrapped send_email binding (tests/e2e/email-with-faults.mjs) and
// maildev as the SMTP failover.
// - An Email Service error code this build does not know is retried with backoff, not a dead letter
//   on first sight; the owner hears of it when it keeps failing (the attempt ceiling).
// - `E_SENDER_NOT_VERIFIED` is ours: the main provider is paused, the owner told, SMTP carries the
//   email; the guest is not suppressed.
// - The operator API's route requests name what is wrong.
// A daily limit with SMTP off is in outbox-all-paused.test.mjs (its owner alert is one per route
// and day, so it needs an outbox of its own).
import { SELF } from "cloudflare:test";
import { describe, it, expect, beforeEach } from "vitest";
import { enqueueEmail, failUntilDead, item, operatorRoute, outboxState, queuedEmail, rows, runOutbox, setOutboxState, today, tries, turn, unique } from "./helpers.mjs";

describe("main provider errors and paused routes", () => {
  beforeEach(async () => {
    await outboxState();
    await setOutboxState("main_paused_until_ms", null);
    await setOutboxState("smtp_paused_until_ms", null);
  });

  it("an Email Service code this build does not know is retried with backoff; only the attempt ceiling makes a dead letter and an owner alert", async () => {
    const to = `${unique("new")}+unknown-code@example.com`;
    const key = await enqueueEmail(to);
    // It keeps failing: retried up to OUTBOX_MAX_ATTEMPTS (6), then a dead letter the owner hears of.
    await failUntilDead(key, { provider: "cloudflare_email", error: /E_SOMETHING_NEW_FROM_THE_SERVICE/ });
    const state = await runOutbox();
    expect(item(state, `owner_email_failed:${key}`)?.status).toBe("sent");
    expect(await rows("SELECT email FROM suppressions WHERE email = ?", to.toLowerCase())).toEqual([]);
  });

  it("E_SENDER_NOT_VERIFIED is ours: the main provider is paused, the owner told, SMTP carries the email, the guest is not suppressed", async () => {
    const to = `${unique("unverified")}+sender-not-verified@example.com`;
    const key = await enqueueEmail(to);
    let state = await turn(key);
    const it = item(state, key);
    expect(it).toMatchObject({ status: "sent", provider: "smtp", attempts: 2, budget_from: 1 });
    expect(tries(state, it)).toEqual([
      ["cloudflare_email", "failed"],
      ["smtp", "sent"],
    ]);
    expect(state.mainPausedUntilMs).toBeGreaterThan(Date.now() + 3_000_000);
    state = await runOutbox();
    const alertKey = `owner_provider_paused:cloudflare_email:${today()}:e-sender-not-verified`;
    expect(item(state, alertKey)).toMatchObject({ status: "sent", provider: "smtp" });
    const alert = await queuedEmail(alertKey);
    expect(alert.text).toContain("E_SENDER_NOT_VERIFIED");
    expect(alert.text).toContain("Email goes out through smtp meanwhile");
    expect(await rows("SELECT email FROM suppressions WHERE email = ?", to.toLowerCase())).toEqual([]);
  });

  it("the operator API names what is wrong in a route request", async () => {
    const bad = await operatorRoute("resend", "resume");
    expect(bad.status).toBe(400);
    expect((await bad.json()).field).toBe("provider");
    const badAction = await operatorRoute("smtp", "stop");
    expect(badAction.status).toBe(400);
    expect((await badAction.json()).field).toBe("action");
    // The route needs the operator token.
    const r = await SELF.fetch("https://engine.test/admin/outbox/provider", {
      method: "POST",
      headers: { authorization: "Bearer wrong", "content-type": "application/json" },
      body: JSON.stringify({ provider: "smtp", action: "resume" }),
    });
    expect(r.status).toBe(401);
  });
});
