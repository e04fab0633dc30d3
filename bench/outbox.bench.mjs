// Outbox alarm cost against queue length, inside workerd (run by bench/run.mjs through
// bench/vitest.bench.config.mjs; not an end-to-end test: nothing here is asserted about speed).
//
// For each N: a fresh Outbox instance (`bench-N`; the object's code does not depend on its name),
// its schema created through GET /state, N client items queued straight into its SQLite (ranks 0–3
// mixed, valid OutgoingEmail JSON), the client slot opened (next_slot_at_ms = 0), then the alarm run
// with runDurableObjectAlarm. Each measured alarm sends exactly one client email through the EMAIL
// binding and records its outcome in D1. The figures come from the object itself (GET /state →
// lastAlarm: SQLite rows read, wall ms) plus the wall time seen from outside. One line per alarm:
// `BENCH_OUTBOX {json}`, which bench/run.mjs collects.
import { env, runInDurableObject, runDurableObjectAlarm, applyD1Migrations } from "cloudflare:test";
import { it, expect } from "vitest";

const SIZES = String(env.BENCH_OUTBOX_SIZES).split(",").map(Number);
const REPEATS = Number(env.BENCH_OUTBOX_REPEATS);
const BATCH = 10_000;

// Rank r → a kind of that rank.
const KIND_SQL = "CASE r WHEN 0 THEN 'checkin_day' WHEN 1 THEN 'booking_confirmation' WHEN 2 THEN 'arrival_guide' ELSE 'marketing' END";
const RANK_NAME_SQL = "CASE r WHEN 0 THEN 'urgent' WHEN 1 THEN 'booking' WHEN 2 THEN 'service' ELSE 'marketing' END";

// Rows i = ?1 … ?2; rank (7i + 3) mod 4, so ranks interleave and the first rank-0 item is not the
// oldest row. email_json has the shape of domain::outbox::outgoing::OutgoingEmail (camelCase).
const FILL = `
WITH RECURSIVE s(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM s WHERE i < ?2),
     t(i, r) AS (SELECT i, (7 * i + 3) % 4 FROM s)
INSERT INTO queue (dedupe_key, audience, rank, status, email_json, enqueued_at_ms, updated_at_ms, recipient)
SELECT ${KIND_SQL} || ':BKBENCH' || i, 'client', r, 'queued',
  json_object(
    'dedupeKey', ${KIND_SQL} || ':BKBENCH' || i,
    'kind', ${KIND_SQL},
    'audience', 'client',
    'rank', ${RANK_NAME_SQL},
    'bookingId', 'BKBENCH' || i,
    'to', 'guest' || i || '@example.com',
    'subject', 'Your stay at Example Harbour Hotel (BKBENCH' || i || ')',
    'text', 'Hello Testa, your stay at Example Harbour Hotel is confirmed. Booking BKBENCH' || i || '. Check-in 2026-06-12, check-out 2026-06-15.',
    'html', '<p>Hello Testa,</p><p>your stay at <b>Example Harbour Hotel</b> is confirmed.</p><p>Booking BKBENCH' || i || '. Check-in 2026-06-12, check-out 2026-06-15.</p>',
    'messageId', '<bench-' || i || '@example.com>'
  ),
  ?3, ?3, 'guest' || i || '@example.com'
FROM t`;

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

async function state(stub) {
  const r = await stub.fetch("https://outbox/state");
  expect(r.status).toBe(200);
  return r.json();
}

it("outbox alarm: rows read and wall time per alarm against queue length", async () => {
  for (const n of SIZES) {
    const stub = env.OUTBOX.getByName(`bench-${n}`);
    await state(stub); // creates the schema
    const fillStarted = Date.now();
    await runInDurableObject(stub, (_instance, ctx) => {
      const now = Date.now();
      for (let start = 0; start < n; start += BATCH) {
        ctx.storage.sql.exec(FILL, start, Math.min(n, start + BATCH) - 1, now);
      }
    });
    const fillMs = Date.now() - fillStarted;
    const before = await state(stub);
    expect(before.counts.queued ?? 0).toBe(n);

    for (let rep = 0; rep < REPEATS; rep++) {
      await runInDurableObject(stub, async (_instance, ctx) => {
        ctx.storage.sql.exec(
          "INSERT INTO state (key, value) VALUES ('next_slot_at_ms', 0) ON CONFLICT(key) DO UPDATE SET value = 0",
        );
        await ctx.storage.setAlarm(Date.now() + 3_600_000);
      });
      const started = Date.now();
      const ran = await runDurableObjectAlarm(stub);
      const outerMs = Date.now() - started;
      const after = await state(stub);
      const sent = (after.counts.sent ?? 0);
      console.log(
        "BENCH_OUTBOX " +
          JSON.stringify({
            n,
            rep,
            ran,
            rowsRead: after.lastAlarm.rowsRead,
            ms: after.lastAlarm.ms,
            outerMs,
            fillMs,
            sent,
            queued: after.counts.queued ?? 0,
          }),
      );
      expect(ran).toBe(true);
      expect(sent).toBe(n === 0 ? 0 : Math.min(n, rep + 1));
    }
  }
});
