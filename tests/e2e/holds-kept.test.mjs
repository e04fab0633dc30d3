// The default for a card-testing hold nobody answers (HOLD_UNANSWERED_ACTION unset: keep): past
// the recall time and past the unanswered time it stays held, is recalled to the owner once, and
// the recall says it stays held. (The owner's loops run configures dismiss instead.)
import { env } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { outboxStub, rows, sweep, unique } from "./helpers.mjs";

const H = 3_600_000;

async function run(sql, ...binds) {
  await env.DB.prepare(sql).bind(...binds).run();
}

/** A checkout attempt and an open hold on it, made `hoursAgo` hours ago. */
async function hold(hoursAgo) {
  const id = unique("hold_");
  const prebook = unique("PB_");
  const at = Date.now() - hoursAgo * H;
  const details = { prebook_id: prebook, email: "tester@example.com", guest_name: { first_name: "Card", last_name: "Tester" }, hotel_name: "Example Harbour Hotel" };
  await run(
    "INSERT INTO checkout_attempts (prebook_id, email, guest_name, attempt_day, attempted_at_ms, details_json, hold_id) VALUES (?, 'tester@example.com', 'card tester', ?, ?, ?, ?)",
    prebook,
    new Date(at).toISOString().slice(0, 10),
    at,
    JSON.stringify(details),
    id,
  );
  await run("INSERT INTO holds (hold_id, status, reason, prebook_id, created_at_ms) VALUES (?, 'held', 'The email tester@example.com was used under 3 different names today (UTC).', ?, ?)", id, prebook, at);
  return id;
}

describe("an unanswered card-testing hold, default policy", () => {
  it("open 80 h (past the 24 h recall and the 72 h unanswered time): stays held, recalled once, and the recall says it stays held", async () => {
    const unanswered = await hold(80);
    await Promise.all([sweep(), sweep()]);

    expect(await rows("SELECT status, action, acted_from FROM holds WHERE hold_id = ?", unanswered)).toEqual([
      { status: "held", action: null, acted_from: null },
    ]);
    expect(await rows("SELECT kind FROM repairs WHERE subject = ?", unanswered)).toEqual([]);
    const key = `owner_checkout_hold:${unanswered}:recall`;
    expect(await rows("SELECT dedupe_key, audience, to_addr FROM emails WHERE dedupe_key LIKE 'owner_checkout_hold:%:recall'")).toEqual([
      { dedupe_key: key, audience: "owner", to_addr: "owner@example.com" },
    ]);
    const r = await outboxStub().fetch(`https://outbox/email?dedupe_key=${encodeURIComponent(key)}`);
    expect(r.status).toBe(200);
    const recall = await r.json();
    expect(recall.subject).toMatch(/^Still held after 80 h/);
    expect(recall.text).toContain("If nobody does, it stays held until you act; nothing is sent to the customer.");
    expect(recall.text).not.toContain("dismisses it");
    expect(recall.html).toContain("it stays held until you act");
    expect(await rows("SELECT recalled_at_ms IS NOT NULL AS recalled FROM holds WHERE hold_id = ?", unanswered)).toEqual([{ recalled: 1 }]);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE dedupe_key LIKE 'checkout_declined%'")).toEqual([{ n: 0 }]);

    // Later sweeps: still held, no second recall.
    await sweep();
    await sweep();
    expect(await rows("SELECT status FROM holds WHERE hold_id = ?", unanswered)).toEqual([{ status: "held" }]);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE dedupe_key LIKE 'owner_checkout_hold:%:recall'")).toEqual([{ n: 1 }]);
  });
});
