// The outbox under failure, inside workerd with the real Durable Object, D1 and send_email binding
// (wrapped to fail on command, tests/e2e/email-with-faults.mjs) and a real SMTP server:
// a transient failure retried then sent once; the attempt ceiling → dead letter → redrive → sent
// once; a kill between the provider's acceptance and our record; resume of the main provider
// after its daily-limit reset.
import { env, SELF } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import {
  book, endBackoff, enqueueEmail, eventually, item, killMidSendThenRetry, rows, runOutbox, setOutboxState, tries,
  turn, unique,
} from "./helpers.mjs";

function redrive(dedupeKey, token = "test-operator-token-0123456789abcdef") {
  return SELF.fetch("https://engine.test/admin/outbox/redrive", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ dedupeKey }),
  });
}

describe("outbox failures", () => {
  it("a transient provider error is retried after its backoff and the email is sent once", async () => {
    const to = `${unique("t")}+fail-1@example.com`;
    const key = await enqueueEmail(to);
    let state = await turn(key);
    expect(item(state, key)).toMatchObject({ status: "waiting", attempts: 1 });
    expect(item(state, key).last_error).toMatch(/E_INTERNAL_SERVER_ERROR/);
    await endBackoff(key);
    state = await turn(key, 2);
    expect(item(state, key)).toMatchObject({ status: "sent", attempts: 2, provider: "cloudflare_email" });
    expect(tries(state, item(state, key))).toEqual([
      ["cloudflare_email", "failed"],
      ["cloudflare_email", "sent"],
    ]);
    expect(await env.EMAIL.accepted(to)).toEqual({ accepted: 1, calls: 2 });
  });

  it("the attempt ceiling makes a dead letter and alerts the owner; a redrive sends it once, and a second redrive is refused", async () => {
    // The wrapped binding fails the first 6 sends to this address; OUTBOX_MAX_ATTEMPTS is 6.
    const to = `${unique("dead")}+fail-6@example.com`;
    const d = await book({ email: to });
    const key = `booking_confirmation:${d.bookingId}`;
    let state;
    for (let i = 1; i <= 6; i++) {
      await endBackoff(key);
      state = await turn(key, i);
      expect(item(state, key).attempts).toBe(i);
    }
    expect(item(state, key)).toMatchObject({ status: "dead", attempts: 6 });
    state = await runOutbox();
    expect(item(state, `owner_email_failed:${key}`)?.status).toBe("sent");
    expect(await rows("SELECT status, attempts FROM emails WHERE dedupe_key = ?", key)).toEqual([{ status: "dead", attempts: 6 }]);

    // The operator finds every dead letter, however long the queue.
    const admin = (query) =>
      SELF.fetch(`https://engine.test/admin/outbox${query}`, { headers: { authorization: "Bearer test-operator-token-0123456789abcdef" } });
    const dead = await (await admin("?status=dead&limit=5")).json();
    expect(dead.items.map((i) => i.dedupe_key)).toContain(key);
    expect(dead.items.every((i) => i.status === "dead")).toBe(true);
    expect(dead.attempts.filter((a) => a.seq === item(dead, key).seq)).toHaveLength(6);
    const one = await (await admin(`?dedupe_key=${encodeURIComponent(key)}`)).json();
    expect(one).toMatchObject({ truncated: false, items: [{ dedupe_key: key, status: "dead" }] });
    const bad = await admin("?status=lost");
    expect(bad.status).toBe(400);
    expect((await bad.json()).message).toMatch(/not an email status/);
    // Operator authentication is required.
    expect((await redrive(key, "wrong")).status).toBe(401);
    const r = await redrive(key);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: "queued", dedupeKey: key });
    // Redriving again is refused (queued, or already sent by an alarm the redrive armed): it can
    // never be in line twice.
    const again = await redrive(key);
    expect(again.status).toBe(409);
    expect(["queued", "sending", "sent"]).toContain((await again.json()).status);
    expect((await redrive("booking_confirmation:nope")).status).toBe(404);

    state = await turn(key, 7);
    const it = item(state, key);
    expect(it).toMatchObject({ status: "sent", attempts: 7, budget_from: 6, dedupe_key: key });
    expect(tries(state, it).at(-1)).toEqual(["cloudflare_email", "sent"]);
    expect(await env.EMAIL.accepted(to)).toEqual({ accepted: 1, calls: 7 });
    // Sent: a redrive now is refused too.
    expect((await redrive(key)).status).toBe(409);
    state = await runOutbox();
    expect(await rows("SELECT status, attempts FROM emails WHERE dedupe_key = ?", key)).toEqual([{ status: "sent", attempts: 7 }]);
  });

  it("killed between the provider's acceptance and our record: re-sent with the same dedupe key and marked sent_possibly_twice", async () => {
    // The first send to this address is accepted by the real binding, then its answer hangs.
    const to = `${unique("kill")}+hang-once@example.com`;
    await setOutboxState("next_slot_at_ms", 0);
    const key = await enqueueEmail(to);
    // The enqueue armed the alarm; the runtime runs it, and it hangs after the hand-over.
    await eventually(async () => expect((await env.EMAIL.accepted(to)).accepted).toBe(1));
    // Kill the Durable Object mid-alarm: the outcome of the hand-over was never recorded. The
    // platform retries the interrupted alarm (at-least-once) on a fresh instance.
    const state = await killMidSendThenRetry(key, "sent_possibly_twice");
    const it = item(state, key);
    expect(it).toMatchObject({ provider: "cloudflare_email", maybe_handed_to: "cloudflare_email", attempts: 2 });
    expect(tries(state, it)).toEqual([
      ["cloudflare_email", "interrupted"],
      ["cloudflare_email", "sent_possibly_twice"],
    ]);
    expect((await env.EMAIL.accepted(to)).accepted).toBe(2);
  });

  it("the main provider stays paused until its reset, then resumes", async () => {
    const now = Date.now();
    await setOutboxState("main_paused_until_ms", now + 3_600_000);
    const during = await enqueueEmail(`${unique("pause")}@example.com`);
    let state = await turn(during);
    expect(item(state, during)).toMatchObject({ status: "sent", provider: "smtp", attempts: 1 });
    // The reset time passes (as at the next UTC day).
    await setOutboxState("main_paused_until_ms", Date.now() - 1);
    const after = await enqueueEmail(`${unique("resumed")}@example.com`);
    state = await turn(after);
    expect(item(state, after)).toMatchObject({ status: "sent", provider: "cloudflare_email", attempts: 1 });
  });
});
