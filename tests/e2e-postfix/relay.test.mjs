// The SMTP failover against a real Postfix relay (tests/e2e-postfix/postfix.mjs), inside workerd with
// the real outbox Durable Object (vitest.postfix.config.mjs). The main provider is paused for every
// case, so SMTP carries every email, at production pacing (slots passed by the test). Each case
// reads Postfix's own log (DATA commands per session) and maildir (copies delivered), and the run
// prints the table docs/internals.md's SMTP section gives.
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, it, expect, beforeEach, afterAll } from "vitest";
import { enqueueEmail, enqueueOwnerAlert, eventually, item, operatorRoute, outboxState, outboxStub, passClientGap, rows, runOutbox, setOutboxState, smtpOnlyOutbox, storeBookingOf, unique } from "../e2e/helpers.mjs";

const OWNER = "owner@example.com";
/** In tests/e2e-postfix/postfix.mjs: a body with it is refused by `body_checks`; the size limit. */
const REFUSED_MARKER = "REFUSE-THIS-CONTENT";
const SIZE_LIMIT = 120_000;

async function postfix(path, body) {
  const r = await fetch(`${env.POSTFIX_API}${path}`, body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`Postfix control ${path} answered ${r.status}: ${await r.text()}`);
  return r.json();
}

/** The Message-ID enqueueEmail gives the email of `key` (`booking_confirmation:<booking>`). */
function messageIdOf(key) {
  return `${key.split(":")[1].toLowerCase()}@example.com`;
}

/** What Postfix saw of one email: DATA commands over its sessions, copies in the maildir. */
async function atPostfix(to, key) {
  const { sessions, delivered } = await postfix("/_test/report");
  const id = key ? messageIdOf(key) : null;
  const mine = sessions.filter((s) => s.to === to || (id && s.messageId === id));
  return {
    sessions: mine.length,
    data: mine.reduce((n, s) => n + s.data, 0),
    copies: delivered.filter((d) => d.to === to || (id && d.messageId === id)).length,
    refusals: mine.map((s) => s.refusal).filter(Boolean),
  };
}

async function ownerCopies(subject) {
  const { delivered } = await postfix("/_test/report");
  return delivered.filter((d) => d.to === OWNER && (!subject || d.subject === subject)).length;
}

async function suppressed(to) {
  return (await rows("SELECT email FROM suppressions WHERE email = ?", to)).length > 0;
}

/** Owner alerts queued since the case began (`since`: the highest queue seq before it). */
function ownerAlerts(state, since) {
  return state.items.filter((i) => i.audience === "owner" && i.seq > since);
}

function pauses(state) {
  return state.routeHistory.filter((e) => e.event === "paused" && e.route === "smtp").length;
}

const measured = [];
let since = 0;

/**
 * Adds a row to the measured table: the case, what Postfix saw of it (`seen`: DATA transactions
 * `data`, `copies` delivered), its final status, whether the guest was suppressed, the SMTP
 * pauses (by default those in `state`) and the owner alerts `state` holds since the case began.
 */
function measure(name, seen, state, status, suppressed = "no", paused = pauses(state)) {
  measured.push({ name, data: seen.data, copies: seen.copies, status, suppressed, pauses: paused, alerts: ownerAlerts(state, since).length });
}

describe("SMTP failover against a real Postfix relay", () => {
  beforeEach(async () => {
    const s = await outboxState();
    since = Math.max(0, ...s.items.map((i) => i.seq));
    await smtpOnlyOutbox();
    await postfix("/_test/configure", { refuseSender: false });
  });

  afterAll(() => {
    const lines = [
      "| Postfix restriction | DATA per email | copies delivered | final status | suppressed | SMTP pauses | owner alerts |",
      "|---|---|---|---|---|---|---|",
      ...measured.map((m) => `| ${m.name} | ${m.data} | ${m.copies} | ${m.status} | ${m.suppressed} | ${m.pauses} | ${m.alerts} |`),
    ];
    console.log(`SMTP failover against Postfix (measured):\n${lines.join("\n")}`);
  });

  it("a relay that accepts everything: sent once, one DATA, one copy", async () => {
    const to = `${unique("plain")}@example.com`.toLowerCase();
    const key = await enqueueEmail(to);
    const state = await passClientGap();
    expect(item(state, key)).toMatchObject({ status: "sent", attempts: 1, provider: "smtp" });
    const seen = await eventually(async () => {
      const s = await atPostfix(to, key);
      expect(s.copies).toBe(1);
      return s;
    });
    expect(seen).toMatchObject({ sessions: 1, data: 1, copies: 1 });
    measure("none (accepts everything)", seen, state, "`sent`");
  });

  it("an unknown recipient (virtual_mailbox_maps: 550 5.1.1): dropped and suppressed, no DATA, the owner told", async () => {
    const to = `unknown-${unique("x")}@example.com`.toLowerCase();
    const key = await enqueueEmail(to);
    let state = await passClientGap();
    expect(item(state, key)).toMatchObject({ status: "dropped", attempts: 1 });
    expect(item(state, key).last_error).toMatch(/RCPT TO: 550 5\.1\.1 <.*>: Recipient address rejected: User unknown in virtual mailbox table/);
    expect(await suppressed(to)).toBe(true);
    state = await runOutbox();
    expect(item(state, `owner_email_failed:${key}`)?.status).toBe("sent");
    const seen = await atPostfix(to, key);
    expect(seen).toMatchObject({ data: 0, copies: 0 });
    measure("unknown recipient (`550 5.1.1`)", seen, state, "`dropped`", "yes");
  });

  it("a refused sender (check_sender_access: 554 5.7.1 at RCPT TO) pauses SMTP, the guest unsuppressed; the owner hears by the owner route; allowed again and resumed, it goes once", async () => {
    await postfix("/_test/configure", { refuseSender: true });
    const to = `${unique("sender")}@example.com`.toLowerCase();
    const key = await enqueueEmail(to);
    let state = await eventually(async () => {
      await setOutboxState("next_slot_at_ms", 0);
      await runDurableObjectAlarm(outboxStub());
      const s = await outboxState();
      expect(item(s, key).status).toBe("waiting");
      return s;
    });
    expect(item(state, key).last_error).toMatch(/554 5\.7\.1 <bookings@example\.com>: Sender address rejected: not owned by user engine/);
    expect(state.smtpPausedUntilMs).toBeGreaterThan(Date.now() + 3_000_000);
    expect(await suppressed(to)).toBe(false);
    // Both guest routes are paused: the owner's alert takes the owner route.
    state = await eventually(async () => {
      await runDurableObjectAlarm(outboxStub());
      const s = await outboxState();
      const alert = ownerAlerts(s, since).find((i) => i.dedupe_key.startsWith("owner_provider_paused:smtp:"));
      expect(alert).toMatchObject({ status: "sent", provider: "owner_route" });
      return s;
    });
    const paused = pauses(state);
    await postfix("/_test/configure", { refuseSender: false });
    expect((await operatorRoute("smtp", "resume")).status).toBe(200);
    state = await eventually(async () => {
      const s = await passClientGap();
      expect(item(s, key).status).toBe("sent");
      return s;
    });
    const seen = await eventually(async () => {
      const s = await atPostfix(to, key);
      expect(s.copies).toBe(1);
      return s;
    });
    expect(seen.data).toBe(1);
    measure("refused sender (`check_sender_access`, `554 5.7.1`), then allowed and resumed", seen, state, "`waiting` (SMTP paused), `sent` once after the resume", "no", paused);
  });

  it("a content verdict on one message (body_checks REJECT) with four guests behind it: the four go in their slots, the refused one is a dead letter with an alert, not suppressed, SMTP never paused", async () => {
    const bad = `${unique("bad")}@example.com`.toLowerCase();
    const badKey = await enqueueEmail(bad, `Dear guest, ${REFUSED_MARKER}, your stay is confirmed.`);
    const good = [];
    for (let i = 0; i < 4; i++) {
      const to = `${unique(`good${i}`)}@example.com`.toLowerCase();
      good.push({ to, key: await enqueueEmail(to) });
    }
    await passClientGap();
    let state = await eventually(async () => {
      const s = await runOutbox();
      expect(item(s, good[0].key).status).toBe("sent");
      return s;
    });
    expect(item(state, badKey).status).toBe("dead");
    expect(item(state, badKey).last_error).toContain("550 5.7.1 message content rejected by policy");
    for (const g of good.slice(1)) {
      state = await passClientGap();
      expect(item(state, g.key).status).toBe("sent");
    }
    state = await runOutbox();
    for (const g of good) {
      const s = await eventually(async () => {
        const seen = await atPostfix(g.to, g.key);
        expect(seen.copies).toBe(1);
        return seen;
      });
      expect(s.data).toBe(1);
    }
    const seen = await atPostfix(bad, badKey);
    expect(seen).toMatchObject({ data: 1, copies: 0 });
    expect(seen.refusals).toEqual([expect.stringContaining("5.7.1 message content rejected by policy")]);
    expect(await suppressed(bad)).toBe(false);
    expect(pauses(state)).toBe(0);
    expect(item(state, `owner_email_failed:${badKey}`)?.status).toBe("sent");
    await eventually(async () => expect(await ownerCopies(`Email dead: Your stay is confirmed`)).toBeGreaterThanOrEqual(1));
    measure("content verdict on one message (`body_checks` REJECT, `550 5.7.1`), four guests behind it", { data: `${seen.data} (each of the four: 1)`, copies: "0 (each of the four: 1)" }, state, "`dead` (the four `sent`, one per slot)");
  });

  it("the same content verdict on every message: SMTP pauses after the probe, both keep their places, one alert", async () => {
    const a = `${unique("spam-a")}@example.com`.toLowerCase();
    const b = `${unique("spam-b")}@example.com`.toLowerCase();
    const aKey = await enqueueEmail(a, `Hello ${REFUSED_MARKER} a`);
    const bKey = await enqueueEmail(b, `Hello ${REFUSED_MARKER} b`);
    // Bookings of two different sources, so the second email shares no supplier or guest text
    // with the first: its refusal is about the route (two emails of one booking or one partner
    // would only set each other aside: tests/e2e-postfix/hostile-probe.test.mjs).
    await storeBookingOf(aKey, a, "liteapi");
    await storeBookingOf(bKey, b, "duffel");
    await passClientGap();
    const state = await eventually(async () => {
      await runDurableObjectAlarm(outboxStub());
      const s = await outboxState();
      expect(s.smtpPausedUntilMs).toBeGreaterThan(Date.now());
      return s;
    });
    for (const key of [aKey, bKey]) expect(item(state, key)).toMatchObject({ status: "waiting", attempts: 1, budget_from: 1 });
    expect(await suppressed(a)).toBe(false);
    const alerts = ownerAlerts(state, since);
    expect(alerts.map((i) => i.dedupe_key)).toEqual([expect.stringMatching(/^owner_provider_paused:smtp:.*:end-of-data-550-5\.7\.1$/)]);
    const seenA = await atPostfix(a, aKey);
    const seenB = await atPostfix(b, bKey);
    expect([seenA.data, seenB.data, seenA.copies, seenB.copies]).toEqual([1, 1, 0, 0]);
    measure("content verdict on every message (`550 5.7.1`)", { data: "1 each", copies: 0 }, state, "`waiting` (both keep their places)");
  });

  it("a message over message_size_limit (552 5.3.4 at the end of data): a dead letter once the next email is accepted; nothing paused", async () => {
    const big = `${unique("big")}@example.com`.toLowerCase();
    const bigKey = await enqueueEmail(big, "x".repeat(SIZE_LIMIT));
    const next = `${unique("after-big")}@example.com`.toLowerCase();
    const nextKey = await enqueueEmail(next);
    await passClientGap();
    const state = await eventually(async () => {
      const s = await runOutbox();
      expect(item(s, nextKey).status).toBe("sent");
      return s;
    });
    expect(item(state, bigKey).status).toBe("dead");
    expect(item(state, bigKey).last_error).toMatch(/552 5\.3\.4 Error: message file too big/);
    expect(pauses(state)).toBe(0);
    const seen = await atPostfix(big, bigKey);
    expect(seen).toMatchObject({ data: 1, copies: 0 });
    measure("message over `message_size_limit` (`552 5.3.4` at the end of data)", seen, state, "`dead` (the next email `sent`)");
  });

  it("a temporary refusal (DEFER in an access map: 450 4.7.1): retried with backoff, not paused, not suppressed", async () => {
    const to = `defer-${unique("x")}@example.com`.toLowerCase();
    const key = await enqueueEmail(to);
    const state = await passClientGap();
    expect(item(state, key)).toMatchObject({ status: "waiting", attempts: 1 });
    expect(item(state, key).last_error).toMatch(/450 4\.7\.1 <.*>: Recipient address rejected: try again later/);
    expect(item(state, key).not_before_ms).toBeGreaterThan(Date.now());
    expect(pauses(state)).toBe(0);
    expect(await suppressed(to)).toBe(false);
    const seen = await atPostfix(to, key);
    expect(seen).toMatchObject({ data: 0, copies: 0 });
    measure("temporary refusal (`DEFER` in an access map, `450 4.7.1`)", seen, state, "`waiting` (retried with backoff)");
  });

  it("an owner alert refused for content that quoted a guest: the guests behind it still go; the owner is told about it in an alert of its own", async () => {
    const alertKey = `owner_new_booking:${unique("BK_")}`;
    await enqueueOwnerAlert(alertKey, "owner_new_booking", "New booking", `New booking. Guest: ${REFUSED_MARKER}.`);
    const guest = `${unique("behind")}@example.com`.toLowerCase();
    const guestKey = await enqueueEmail(guest);
    const state = await eventually(async () => {
      const s = await runOutbox();
      expect(item(s, guestKey).status).toBe("sent");
      expect(item(s, `owner_email_failed:${alertKey}`)?.status).toBe("sent");
      return s;
    });
    expect(item(state, alertKey).status).toBe("dead");
    expect(pauses(state)).toBe(0);
    await eventually(async () => expect(await ownerCopies("Email dead: New booking")).toBe(1));
    const seen = await atPostfix(OWNER, alertKey);
    measure("content verdict on an owner alert quoting a guest", { data: 1, copies: 0 }, state, "`dead` (the guest behind it `sent`; the owner told)");
    expect(seen.refusals).toContain("5.7.1 message content rejected by policy");
  });
});
