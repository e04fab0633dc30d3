// The default for a card-testing hold nobody answers (HOLD_UNANSWERED_ACTION unset: keep): past
// the recall time and past the unanswered time it stays held, is recalled to the owner once, and
// the recall says it stays held. (The owner's loops run configures dismiss instead.)
import { describe, it, expect } from "vitest";
import { outboxStub, rows, seedHold as hold, sweep } from "./helpers.mjs";

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
