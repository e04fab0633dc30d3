// The outbox Durable Object: owner alerts at once, client mail paced, sends through the EMAIL
// binding, daily-limit failover to a real SMTP server, records in D1.
import { env } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { book, item, outboxState, rows, runOutbox, sendThrough, smtpInbox, unique } from "./helpers.mjs";

describe("outbox", () => {
  it("sends the owner alert at once and the confirmation through EMAIL, recording both in D1", async () => {
    const d = await book();
    await runOutbox();
    const state = await outboxState();
    const confirmation = item(state, `booking_confirmation:${d.bookingId}`);
    const alert = item(state, `owner_new_booking:${d.bookingId}`);
    expect(alert).toMatchObject({ status: "sent", provider: "cloudflare_email", attempts: 1, audience: "owner" });
    expect(confirmation).toMatchObject({ status: "sent", provider: "cloudflare_email", attempts: 1, rank: 1 });
    expect(confirmation.provider_message_id).toMatch(/^<.+@.+>$/);

    const recorded = await rows(
      "SELECT dedupe_key, status, provider, provider_message_id, attempts, sent_at_ms FROM emails WHERE booking_id = ? ORDER BY dedupe_key",
      d.bookingId,
    );
    expect(recorded).toHaveLength(2);
    for (const row of recorded) {
      expect(row).toMatchObject({ status: "sent", provider: "cloudflare_email", attempts: 1 });
      expect(row.provider_message_id).toBeTruthy();
      expect(row.sent_at_ms).toBeGreaterThan(0);
    }
    expect(recorded[0].provider_message_id).toBe(confirmation.provider_message_id);
  });

  it("enqueue is idempotent on the dedupe key", async () => {
    const d = await book();
    const state = await outboxState();
    const before = state.items.filter((i) => i.dedupe_key.endsWith(d.bookingId)).length;
    const stub = env.OUTBOX.getByName("outbox");
    const email = {
      dedupeKey: `booking_confirmation:${d.bookingId}`,
      kind: "booking_confirmation",
      audience: "client",
      rank: "booking",
      bookingId: d.bookingId,
      to: "guest@example.com",
      subject: "again",
      text: "again",
      html: "<p>again</p>",
      messageId: "<x@example.com>",
    };
    const r = await stub.fetch("https://outbox/enqueue", { method: "POST", body: JSON.stringify(email) });
    expect(await r.json()).toEqual({ status: "duplicate" });
    const after = (await outboxState()).items.filter((i) => i.dedupe_key.endsWith(d.bookingId));
    expect(after).toHaveLength(before);
    // The first enqueue's content stays: a second enqueue never replaces a queued or sent email.
    const kept = await (await stub.fetch(`https://outbox/email?dedupe_key=${encodeURIComponent(email.dedupeKey)}`)).json();
    expect(kept.subject).toBe("Your stay at Example Harbour Hotel is confirmed");
    expect(kept.text).not.toBe("again");
  });

  it("paces client mail 150–160 s apart while owner alerts skip the line", async () => {
    const a = await book();
    const b = await book();
    await runOutbox();
    const state = await outboxState();
    const confirmations = [a, b].map((d) => item(state, `booking_confirmation:${d.bookingId}`));
    const sent = confirmations.filter((c) => c.status === "sent");
    const queued = confirmations.filter((c) => c.status === "queued");
    // One client slot: at most one of the two confirmations went out now (an earlier test may
    // have used the slot already), the other waits for the next slot.
    expect(sent.length).toBeLessThanOrEqual(1);
    expect(queued.length).toBeGreaterThanOrEqual(1);
    for (const d of [a, b]) {
      expect(item(state, `owner_new_booking:${d.bookingId}`).status).toBe("sent");
    }
    const lastClientSend = Math.max(
      ...state.items.filter((i) => i.audience === "client" && i.sent_at_ms).map((i) => i.sent_at_ms),
    );
    const gap = state.nextSlotAtMs - lastClientSend;
    expect(gap).toBeGreaterThanOrEqual(150_000);
    expect(gap).toBeLessThanOrEqual(160_000 + 50);
  });

  it("daily limit on the main provider: fails over to SMTP, pauses main until the next UTC day, and the next email skips main", async () => {
    const marker = unique("dl");
    // The wrapped EMAIL binding throws E_DAILY_LIMIT_EXCEEDED for `+daily-limit@` recipients.
    const d = await book({ email: `${marker}+daily-limit@example.com` });
    // Let client slots pass until this confirmation's turn (pacing is asserted above).
    let state = await sendThrough(`booking_confirmation:${d.bookingId}`);
    const confirmation = item(state, `booking_confirmation:${d.bookingId}`);
    expect(confirmation).toMatchObject({ status: "sent", provider: "smtp", attempts: 2 });
    const tries = state.attempts.filter((t) => t.seq === confirmation.seq).sort((x, y) => x.attempt - y.attempt);
    expect(tries.map((t) => [t.provider, t.outcome])).toEqual([
      ["cloudflare_email", "failed"],
      ["smtp", "sent"],
    ]);
    expect(tries[0].error).toMatch(/E_DAILY_LIMIT_EXCEEDED/);
    const dayMs = 86_400_000;
    expect(state.mainPausedUntilMs).toBe((Math.floor(tries[0].at_ms / dayMs) + 1) * dayMs);

    // The same email arrived at the real SMTP server.
    const delivered = await smtpInbox();
    const got = delivered.filter((m) => m.to?.some((t) => t.address === `${marker}+daily-limit@example.com`));
    expect(got).toHaveLength(1);
    expect(got[0].subject).toBe("Your stay at Example Harbour Hotel is confirmed");
    expect(got[0].headers["message-id"]).toMatch(/^<[0-9a-f]{32}@example\.com>$/);
    // Its calendar part travelled by SMTP too: a text/calendar; method=PUBLISH attachment.
    const calendar = (got[0].attachments ?? []).filter((a) => a.contentType?.startsWith("text/calendar"));
    expect(calendar).toHaveLength(1);
    expect(calendar[0].filename ?? calendar[0].fileName, JSON.stringify(Object.keys(calendar[0]))).toBe("stay.ics");

    // The next email (the owner alert of a new booking) goes by SMTP without trying main.
    const next = await book();
    await runOutbox();
    state = await outboxState();
    const alert = item(state, `owner_new_booking:${next.bookingId}`);
    expect(alert).toMatchObject({ status: "sent", provider: "smtp", attempts: 1 });
    expect(state.attempts.filter((t) => t.seq === alert.seq).map((t) => t.provider)).toEqual(["smtp"]);
    const recorded = await rows("SELECT status, provider, attempts FROM emails WHERE dedupe_key = ?", `booking_confirmation:${d.bookingId}`);
    expect(recorded).toEqual([{ status: "sent", provider: "smtp", attempts: 2 }]);
  });

  it("the content lock blocks a client email carrying an owner-action link or a placeholder, keeps it, and alerts the owner", async () => {
    const stub = env.OUTBOX.getByName("outbox");
    const base = {
      kind: "booking_confirmation",
      audience: "client",
      rank: "booking",
      bookingId: unique("BK_lock_"),
      to: "guest@example.com",
      subject: "Your stay is confirmed",
      html: "<p>ok</p>",
      messageId: "<lock@example.com>",
    };
    const leaky = { ...base, dedupeKey: `booking_confirmation:${unique("lock")}`, text: "Manage it here: https://engine.test/actions/abc.def" };
    const unrendered = { ...base, dedupeKey: `booking_confirmation:${unique("lock")}`, text: "Hi {{ guest_first_name }}" };
    for (const email of [leaky, unrendered]) {
      const r = await stub.fetch("https://outbox/enqueue", { method: "POST", body: JSON.stringify(email) });
      expect(await r.json()).toEqual({ status: "queued" });
    }
    const state = await sendThrough(leaky.dedupeKey);
    await sendThrough(unrendered.dedupeKey);
    const after = await outboxState();
    for (const email of [leaky, unrendered]) {
      const it = after.items.find((i) => i.dedupe_key === email.dedupeKey);
      expect(it.status).toBe("blocked");
      expect(it.attempts).toBe(0);
      expect(it.last_error).toMatch(/content lock/);
      const alert = after.items.find((i) => i.dedupe_key === `owner_email_failed:${email.dedupeKey}`);
      expect(alert?.status).toBe("sent");
    }
    expect(state.items.find((i) => i.dedupe_key === leaky.dedupeKey).last_error).toMatch(/action/i);
    // The rendered body is kept for inspection, and the operator can read it.
    const { SELF } = await import("cloudflare:test");
    const inspect = (key, token = "test-operator-token-0123456789abcdef") =>
      SELF.fetch(`https://engine.test/admin/outbox/email?dedupe_key=${encodeURIComponent(key)}`, { headers: { authorization: `Bearer ${token}` } });
    const kept = await (await inspect(leaky.dedupeKey)).json();
    expect(kept.text).toContain("/actions/abc.def");
    expect((await inspect(leaky.dedupeKey, "wrong")).status).toBe(401);
    const missing = await inspect("booking_confirmation:nope");
    expect(missing.status).toBe(404);
    expect((await missing.json()).error).toBe("not_found");
    const noKey = await SELF.fetch("https://engine.test/admin/outbox/email", { headers: { authorization: "Bearer test-operator-token-0123456789abcdef" } });
    expect(noKey.status).toBe(400);
    expect((await noKey.json()).field).toBe("dedupe_key");
  });

  it("a suppressed recipient is dropped with its reason and the owner is alerted; a provider error is retried after a jittered backoff", async () => {
    // The main provider's daily-limit pause (from the failover test) ends, as at the next UTC day.
    const { runInDurableObject } = await import("cloudflare:test");
    await runInDurableObject(env.OUTBOX.getByName("outbox"), async (_instance, st) => {
      st.storage.sql.exec("DELETE FROM state WHERE key = 'main_paused_until_ms'");
    });
    const marker = unique("drop");
    const dropped = await book({ email: `${marker}+suppressed@example.com` });
    let state = await sendThrough(`booking_confirmation:${dropped.bookingId}`);
    const d = item(state, `booking_confirmation:${dropped.bookingId}`);
    expect(d).toMatchObject({ status: "dropped", attempts: 1 });
    expect(d.last_error).toMatch(/E_RECIPIENT_SUPPRESSED/);
    state = await runOutbox();
    expect(item(state, `owner_email_failed:booking_confirmation:${dropped.bookingId}`)?.status).toBe("sent");
    expect(await rows("SELECT status, attempts FROM emails WHERE dedupe_key = ?", `booking_confirmation:${dropped.bookingId}`)).toEqual([
      { status: "dropped", attempts: 1 },
    ]);

    const flaky = await book({ email: `${unique("retry")}+internal@example.com` });
    const before = Date.now();
    state = await sendThrough(`booking_confirmation:${flaky.bookingId}`).catch(() => outboxState());
    const w = item(state, `booking_confirmation:${flaky.bookingId}`);
    expect(w.status).toBe("waiting");
    expect(w.attempts).toBe(1);
    // First retry: equal jitter over the 30 s base → between 15 and 30 s after the failure.
    expect(w.not_before_ms - before).toBeGreaterThanOrEqual(15_000 - 1_000);
    expect(w.not_before_ms - before).toBeLessThanOrEqual(30_000 + 5_000);
  });

  it("answers every error with the shared JSON error body, with the same status codes", async () => {
    const stub = env.OUTBOX.getByName("outbox");
    const expectError = async (response, status, error, field) => {
      expect(response.status).toBe(status);
      const body = await response.json();
      expect(body).toMatchObject({ error });
      expect(body.message).toEqual(expect.any(String));
      if (field) expect(body.field).toBe(field);
      else expect(body).not.toHaveProperty("field");
    };
    await expectError(await stub.fetch("https://outbox/enqueue", { method: "POST", body: "{" }), 400, "invalid_payload");
    await expectError(await stub.fetch("https://outbox/redrive", { method: "POST", body: "[]" }), 400, "invalid_payload", "dedupeKey");
    await expectError(await stub.fetch("https://outbox/redrive", { method: "POST", body: JSON.stringify({ dedupeKey: "booking_confirmation:nowhere" }) }), 404, "not_found");
    await expectError(await stub.fetch("https://outbox/state?limit=0"), 400, "invalid_payload", "query");
    await expectError(await stub.fetch("https://outbox/email?dedupe_key=booking_confirmation%3Anowhere"), 404, "not_found");
    await expectError(await stub.fetch("https://outbox/nowhere"), 404, "not_found");
  });
});
