// The overview's stale-skip count: a guest email whose moment passed while it waited in the outbox
// is skipped as stale at its turn, recorded in D1, and counted on the admin overview for today
// (UTC) — not for yesterday.
import { runInDurableObject } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { adminCookie, adminPage, futureBooking, item, outboxStub, rows, runLiteapi, sendThrough } from "../e2e/helpers.mjs";

/** The `#stale-skips` card's figures: `[today, yesterday]`. */
function staleCard(html) {
  const m = /<div class="card" id="stale-skips"><b>(\d+)<\/b>skipped as stale today \(UTC; yesterday (\d+)\)<\/div>/.exec(html);
  expect(m, "the overview has its stale-skips card").not.toBe(null);
  return [Number(m[1]), Number(m[2])];
}

describe("the overview's stale skips", () => {
  it("a guest email skipped as stale at its turn is counted as 1 today on the overview", async () => {
    const cookie = await adminCookie();
    expect(staleCard(await adminPage("/admin", cookie))).toEqual([0, 0]);

    const d = futureBooking({ checkinInDays: 30, nights: 3 });
    const out = await runLiteapi(d);
    const guideKey = `arrival_guide:${d.bookingId}:${d.checkin}`;
    expect(out.emails.map(([k]) => k)).toContain(guideKey);
    // A backlog held it past its moment: its own record says so.
    await runInDurableObject(outboxStub(), async (_o, state) => {
      state.storage.sql.exec("UPDATE queue SET expires_at_ms = ? WHERE dedupe_key = ?", Date.now() - 60_000, guideKey);
    });
    const state = await sendThrough(guideKey);
    expect(item(state, guideKey)).toMatchObject({ status: "skipped", attempts: 0 });
    const recorded = await rows("SELECT status, last_error FROM emails WHERE dedupe_key = ?", guideKey);
    expect(recorded).toEqual([{ status: "skipped", last_error: expect.stringMatching(/^stale: /) }]);
    // Every other email of the booking went out or waits: only the guide was skipped as stale.
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE last_error LIKE 'stale%'")).toEqual([{ n: 1 }]);

    expect(staleCard(await adminPage("/admin", cookie))).toEqual([1, 0]);
  }, 120_000);
});
