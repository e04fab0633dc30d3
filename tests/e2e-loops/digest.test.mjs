// The owner's daily digest (this run: due from 00:00 UTC, so whenever the test runs it covers the
// UTC day before): nothing to report sends nothing; a seeded day sends one digest, whatever the
// number of overlapping ticks, each section linking its admin page. Open card-testing holds are
// recalled once and unanswered ones dismissed (HOLD_UNANSWERED_ACTION = dismiss in this run), and
// email as sent is kept 180 days (RETENTION_EMAIL_CONTENT_DAYS).
import { env } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { outboxStub, rows, seedHold as hold, sweep, unique } from "../e2e/helpers.mjs";

const H = 3_600_000;
const DAY = 24 * H;

const today = () => new Date().toISOString().slice(0, 10);
const yesterdayNoon = () => Math.floor(Date.now() / DAY) * DAY - 12 * H;

async function run(sql, ...binds) {
  await env.DB.prepare(sql).bind(...binds).run();
}

async function queued(key) {
  const r = await outboxStub().fetch(`https://outbox/email?dedupe_key=${encodeURIComponent(key)}`);
  return r.status === 200 ? r.json() : null;
}

describe("the owner's daily digest", () => {
  it("an empty day sends none; a seeded day sends exactly one across overlapping ticks, each line linked; the next tick sends nothing more", async () => {
    await sweep();
    expect(await rows("SELECT status FROM owner_digests WHERE sent_on = ?", today())).toEqual([{ status: "empty" }]);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE kind = 'owner_digest'")).toEqual([{ n: 0 }]);

    // A new day's digest (the empty day forgotten), over a day with something to say.
    await run("DELETE FROM owner_digests");
    const at = yesterdayNoon();
    const booking = unique("BK_");
    await run("INSERT INTO contacts (email, first_name, last_name, created_at_ms, updated_at_ms) VALUES ('digest-guest@example.com', 'Ana', 'Ruiz', ?, ?) ON CONFLICT DO NOTHING", at, at);
    await run(
      "INSERT INTO bookings (booking_id, source, kind, contact_email, status, hotel_name, checkin, checkout, details_json, created_at_ms, updated_at_ms) VALUES (?, 'liteapi', 'hotel', 'digest-guest@example.com', 'CONFIRMED', 'Hotel <b>Sol</b>', '2030-02-01', '2030-02-03', '{}', ?, ?)",
      booking,
      at,
      at,
    );
    const email = (key, status, error = null) =>
      run(
        "INSERT INTO emails (dedupe_key, kind, audience, booking_id, to_addr, subject, rank, status, message_id, attempts, created_at_ms, updated_at_ms, last_error) VALUES (?, 'booking_confirmation', 'client', ?, 'digest-guest@example.com', 's', 1, ?, ?, 1, ?, ?, ?)",
        key,
        booking,
        status,
        `<${key}@example.com>`,
        at,
        at,
        error,
      );
    await email(`booking_confirmation:${booking}`, "sent");
    await email(`arrival_guide:${booking}`, "skipped", "stale: pointless since 2030-01-29T00:00Z");
    await email(`hotel_confirmation_number:${booking}`, "dead", "550 no");
    await run("INSERT INTO repairs (repair_key, kind, subject, reason, at_ms) VALUES (?, 'journey_started', 'e-liteapi-x-1', 'stuck received', ?)", unique("rep_"), at);
    // Today's repairs wait for tomorrow's digest.
    await run("INSERT INTO repairs (repair_key, kind, subject, reason, at_ms) VALUES (?, 'outbox_rearmed', 'repaired-today', 'x', ?)", unique("rep_"), Date.now() - 1);
    await hold(2);

    await Promise.all([sweep(), sweep(), sweep()]);
    const digests = await rows("SELECT dedupe_key, audience, to_addr FROM emails WHERE kind = 'owner_digest'");
    expect(digests).toEqual([{ dedupe_key: `owner_digest:${today()}`, audience: "owner", to_addr: "owner@example.com" }]);
    expect(await rows("SELECT status FROM owner_digests WHERE sent_on = ?", today())).toEqual([{ status: "sent" }]);
    const d = await queued(`owner_digest:${today()}`);
    const yesterday = new Date(at).toISOString().slice(0, 10);
    expect(d.subject).toBe(`Daily digest ${yesterday}: 1 bookings, 1 waiting for you`);
    for (const needle of [
      "Bookings: 1",
      `https://engine.test/admin/booking?id=${booking}`,
      "Guest emails: 1 sent, 1 failed (dead, dropped or blocked), 1 skipped as stale",
      "Card-testing holds open: 1",
      "https://engine.test/admin/holds",
      "Dead letters in the outbox: 1",
      "https://engine.test/admin/queue",
      "Repairs the engine made by itself: 1",
      "journey started: e-liteapi-x-1",
    ]) {
      expect(d.text, needle).toContain(needle);
    }
    expect(d.text).not.toContain("repaired-today");
    expect(d.html).not.toContain("<b>Sol</b>");
    expect(d.text).not.toContain("/admin/deliveries"); // nothing dead there: no section

    // Later ticks the same day: nothing more.
    await sweep();
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE kind = 'owner_digest'")).toEqual([{ n: 1 }]);
  });

  it("an open hold is recalled once after 24 h with fresh links; one unanswered for 72 h is dismissed as configured and listed among the repairs", async () => {
    const recent = await hold(2);
    const old = await hold(30);
    const unanswered = await hold(80);
    await Promise.all([sweep(), sweep()]);
    const recalls = await rows("SELECT dedupe_key FROM emails WHERE dedupe_key LIKE 'owner_checkout_hold:%:recall' ORDER BY dedupe_key");
    expect(recalls).toEqual([{ dedupe_key: `owner_checkout_hold:${old}:recall` }]);
    const recall = await queued(`owner_checkout_hold:${old}:recall`);
    expect(recall.subject).toMatch(/^Still held after 30 h/);
    expect(recall.text).toContain("If nobody does, the engine dismisses it (closed, nothing sent to the customer).");
    expect(recall.text).toMatch(/Dismiss \(send nothing\): https:\/\/engine\.test\/actions\//);
    expect(await rows("SELECT status, action, acted_from FROM holds WHERE hold_id = ?", unanswered)).toEqual([
      { status: "dismissed", action: "dismiss", acted_from: "sweeper" },
    ]);
    const [repair] = await rows("SELECT kind, reason FROM repairs WHERE subject = ?", unanswered);
    expect(repair.kind).toBe("hold_unanswered");
    expect(repair.reason).toContain("nothing was sent to the customer");
    expect(await rows("SELECT status FROM holds WHERE hold_id = ?", recent)).toEqual([{ status: "held" }]);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE dedupe_key LIKE 'checkout_declined%'")).toEqual([{ n: 0 }]);

    // Recalled once.
    await sweep();
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE dedupe_key LIKE 'owner_checkout_hold:%:recall'")).toEqual([{ n: 1 }]);
  });

  it("email as sent is kept 180 days: 179 days old stays, 181 days old is pruned", async () => {
    const keep = unique("keep:");
    const prune = unique("prune:");
    const insert = (key, days) =>
      run("INSERT INTO email_contents (dedupe_key, subject, text_body, html_body, headers_json, created_at_ms) VALUES (?, 's', 't', 'h', '[]', ?)", key, Date.now() - days * DAY);
    await insert(keep, 179);
    await insert(prune, 181);
    await sweep();
    expect(await rows("SELECT dedupe_key FROM email_contents WHERE dedupe_key IN (?, ?)", keep, prune)).toEqual([{ dedupe_key: keep }]);
  });
});
