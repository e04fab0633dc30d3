// Refunds never stall: a compensation waiting for the owner is reminded after
// REFUND_REMINDER_AFTER_MS (24 h) with fresh links — the older links go out of date, the newest
// work — and the admin's refunds page (and the JSON API) decide it through the alert's own claim,
// so the fake Stripe sees one refund however many clicks, links and pages race.
import { SELF } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import {
  compensationOf, emailsLike, failedAfterPayment, postLink, queuedEmail, refundLinks, refundPosts,
} from "../e2e/compensation-helpers.mjs";
import { OPERATOR, adminCookie, adminForm, adminPage, rows, runOutbox, sweep } from "../e2e/helpers.mjs";

const DAY = 86_400_000;

/**
 * A paid checkout (its prebook recorded first, which the payment proof needs) the supplier then
 * failed: its refund waits for the owner.
 */
async function waitingRefund() {
  const { c, comp, links } = await failedAfterPayment();
  expect(comp.steps.refund.status).toBe("awaiting_owner");
  return { c, id: comp.compensation_id, links };
}

/** Moves the refund's wait (and the last reminder) `days` into the past. */
async function waitedFor(id, days) {
  const at = Date.now() - days * DAY;
  await rows("UPDATE compensation_steps SET updated_at_ms = ? WHERE compensation_id = ? AND step = 'refund' RETURNING 1", at, id);
  await rows("UPDATE compensations SET owner_told_at_ms = CASE WHEN owner_told_at_ms IS NULL THEN NULL ELSE ? END WHERE compensation_id = ? RETURNING 1", at, id);
}

describe("refunds waiting for the owner", () => {
  it("a refund left waiting 24 h is reminded with fresh links; the old links are out of date, the new ones work; bounded, once per day", async () => {
    const { c, id, links } = await waitingRefund();
    await sweep();
    expect(await emailsLike(`owner_compensation:${id}:reminder`)).toEqual([]);

    await waitedFor(id, 1.01);
    await Promise.all([sweep(), sweep()]); // overlapping ticks: one reminder
    const reminders = await emailsLike(`owner_compensation:${id}:reminder`);
    expect(reminders.map((r) => r.dedupe_key)).toEqual([`owner_compensation:${id}:reminder_1`]);
    expect(await rows("SELECT reminders_sent FROM compensations WHERE compensation_id = ?", id)).toEqual([{ reminders_sent: 1 }]);
    await runOutbox();
    const reminder = await queuedEmail(`owner_compensation:${id}:reminder_1`);
    expect(reminder.subject).toMatch(/^Reminder 1: a refund waits for your decision/);
    const fresh = refundLinks(reminder.text);
    expect(fresh.now).toMatch(/^https:\/\/engine\.test\/actions\//);
    expect(fresh.now).not.toBe(links.now);

    // The first alert's links are out of date now: nothing happens, nothing reaches Stripe.
    for (const old of [links.now, links.handled]) {
      const r = await postLink(old);
      expect(r.status).toBe(409);
      expect(await r.text()).toContain("A newer reminder about this refund replaced it");
    }
    expect(await refundPosts(c.pi)).toEqual([]);

    // Not again the same day; the next day, reminder 2 (and reminder 1's links go out of date).
    await sweep();
    expect((await compensationOf(c)).reminders_sent).toBe(1);
    await waitedFor(id, 1.01);
    await sweep();
    expect((await compensationOf(c)).reminders_sent).toBe(2);
    expect((await postLink(fresh.now)).status).toBe(409);
    const second = refundLinks((await queuedEmail(`owner_compensation:${id}:reminder_2`)).text);

    // The newest links act, once.
    const acted = await postLink(second.now);
    expect(acted.status, await acted.clone().text()).toBe(200);
    expect(await refundPosts(c.pi)).toHaveLength(1);
    expect((await compensationOf(c)).steps.refund.status).toBe("done");

    // Decided: no more reminders, whatever the time.
    await waitedFor(id, 3);
    await sweep();
    expect((await compensationOf(c)).reminders_sent).toBe(2);
  });

  it("at most REFUND_REMINDER_MAX (7) reminders", async () => {
    const { c, id } = await waitingRefund();
    for (let i = 0; i < 9; i++) {
      await waitedFor(id, 1.01);
      await sweep();
    }
    expect((await compensationOf(c)).reminders_sent).toBe(7);
    expect(await emailsLike(`owner_compensation:${id}:reminder`)).toHaveLength(7);
  });

  it("the admin's refunds page counts and lists what waits; its button refunds once at Stripe; a second click and the old links are refused", async () => {
    const { c, id, links } = await waitingRefund();
    const cookie = await adminCookie();
    const overview = await adminPage("/admin", cookie);
    const waiting = Number(/<b>(\d+)<\/b><a href="\/admin\/refunds">refunds waiting for you/.exec(overview)?.[1]);
    const [{ n }] = await rows("SELECT COUNT(*) AS n FROM compensation_steps WHERE step = 'refund' AND status IN ('awaiting_owner', 'failed')");
    expect(waiting).toBe(n);
    expect(waiting).toBeGreaterThanOrEqual(1);
    const page = await adminPage("/admin/refunds", cookie);
    expect(page).toContain(id);
    expect(page).toContain(c.email);
    expect(page).toContain('value="refund_now"');

    const click = () => adminForm(cookie, "/admin/refunds", "/admin/refunds/act", { compensation_id: id, action: "refund_now" });
    const [a, b] = await Promise.all([click(), click()]);
    expect([a.status, b.status]).toEqual([303, 303]);
    const outcomes = [a, b].map((r) => new URL(r.headers.get("location"), "https://engine.test").searchParams.get("done")).sort();
    expect(outcomes).toEqual(["refund_decided", "refunded"]);
    expect(await refundPosts(c.pi)).toHaveLength(1);
    const after = await compensationOf(c);
    expect(after.steps.refund).toMatchObject({ status: "done", provider_status: "succeeded" });
    expect(after.steps.refund.claimed_by).toMatch(/^admin:owner:\d+$/);

    // Again from the page, then the alert's links: nothing more reaches Stripe.
    const again = await click();
    expect(new URL(again.headers.get("location"), "https://engine.test").searchParams.get("done")).toBe("refund_decided");
    expect((await postLink(links.now)).status).toBe(409);
    expect((await postLink(links.handled)).status).toBe(409);
    expect(await refundPosts(c.pi)).toHaveLength(1);
    expect(await adminPage("/admin/refunds?group=done", cookie)).toContain(id);
    expect(await adminPage("/admin/refunds", cookie)).not.toContain(id);
  });

  it("the JSON operator API lists refunds by group and decides one through the same claim", async () => {
    const { c, id } = await waitingRefund();
    const list = await SELF.fetch("https://engine.test/admin/compensations?group=waiting", { headers: OPERATOR });
    expect(list.status).toBe(200);
    const body = await list.json();
    expect(body.group).toBe("waiting");
    expect(body.counts.waiting).toBeGreaterThanOrEqual(1);
    expect(body.refunds.map((r) => r.compensationId)).toContain(id);

    const act = (action) =>
      SELF.fetch("https://engine.test/admin/compensations/act", { method: "POST", headers: OPERATOR, body: JSON.stringify({ compensationId: id, action, by: "ops" }) });
    const first = await act("refund_handled");
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ compensationId: id, outcome: "handled" });
    expect(await (await act("refund_now")).json()).toMatchObject({ outcome: "already_decided" });
    expect(await refundPosts(c.pi)).toEqual([]);
    expect((await compensationOf(c)).steps.refund.claimed_by).toMatch(/^operator:ops:\d+$/);

    // Two requests at once on another waiting refund: one refund at Stripe.
    const other = await waitingRefund();
    const actOn = (action) =>
      SELF.fetch("https://engine.test/admin/compensations/act", { method: "POST", headers: OPERATOR, body: JSON.stringify({ compensationId: other.id, action }) });
    const both = await Promise.all([actOn("refund_now"), actOn("refund_now")]);
    const outcomes = (await Promise.all(both.map((r) => r.json()))).map((o) => o.outcome).sort();
    expect(outcomes).toEqual(["already_decided", "refunded"]);
    expect(await refundPosts(other.c.pi)).toHaveLength(1);

    const bad = await SELF.fetch("https://engine.test/admin/compensations/act", { method: "POST", headers: OPERATOR, body: JSON.stringify({ compensationId: id, action: "dismiss" }) });
    expect(bad.status).toBe(400);
    expect((await bad.json()).field).toBe("action");
    const unknown = await SELF.fetch("https://engine.test/admin/compensations/act", { method: "POST", headers: OPERATOR, body: JSON.stringify({ compensationId: "comp-nope", action: "refund_now" }) });
    expect(unknown.status).toBe(404);
    const badGroup = await SELF.fetch("https://engine.test/admin/compensations?group=lost", { headers: OPERATOR });
    expect(badGroup.status).toBe(400);
    expect((await SELF.fetch("https://engine.test/admin/compensations")).status).toBe(401);
  });
});
