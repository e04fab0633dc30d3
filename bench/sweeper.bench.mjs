// One sweeper tick against table size, inside workerd (run by bench/sweeper.mjs through
// bench/vitest.sweeper.config.mjs; not an end-to-end test: nothing here is asserted about speed).
//
// For each N and each number of due items: D1 emptied, then N bookings, N planned scheduled sends
// (due in the future), N sent emails and N finished raw events (fresh: not prunable) filled by
// recursive INSERTs; "due" adds that many of each kind of due work: raw events stuck `received`
// past the grace period (valid liteAPI deliveries: the tick starts their journeys), old finished
// raw events (their bodies are pruned), scheduled sends past due whose instance does not exist (of
// cancelled bookings: the tick decides them `skipped`), and emails `claimed` long ago that the
// outbox does not hold and an earlier tick already found unsettled (the tick hands them over
// again). Then one tick through the Worker's own scheduled handler. Its report (JSON, logged as
// `sweeper: {…}`) gives the D1 rows read by the sweeper's queries; the wall time is measured around
// the call. One line per tick: `BENCH_SWEEPER {json}`.
import { env, applyD1Migrations, createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { it, expect } from "vitest";
import Engine from "../src/entry.mjs";
import confirmed from "../tests/fixtures/liteapi-booking-confirmed.json";

const SIZES = String(env.BENCH_SWEEPER_SIZES).split(",").map(Number);
const DUE = String(env.BENCH_SWEEPER_DUE).split(",").map(Number);
const BATCH = 10_000;
const DAY = 86_400_000;

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

const fills = [
  `WITH RECURSIVE s(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM s WHERE i < ?2)
   INSERT INTO contacts (email, created_at_ms, updated_at_ms) SELECT 'guest' || i || '@example.com', ?3, ?3 FROM s`,
  `WITH RECURSIVE s(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM s WHERE i < ?2)
   INSERT INTO bookings (booking_id, source, kind, contact_email, status, hotel_name, checkin, checkout, details_json, created_at_ms, updated_at_ms)
   SELECT 'BKBENCH' || i, 'liteapi', 'hotel', 'guest' || i || '@example.com', 'CONFIRMED', 'Example Harbour Hotel', '2027-06-12', '2027-06-15', '{}', ?3, ?3 FROM s`,
  `WITH RECURSIVE s(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM s WHERE i < ?2)
   INSERT INTO scheduled_sends (booking_id, kind, journey_version, due_at_ms, status, planned_at_ms)
   SELECT 'BKBENCH' || i, 'arrival_guide', 1, ?3 + 30 * ${DAY} + i, 'planned', ?3 FROM s`,
  `WITH RECURSIVE s(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM s WHERE i < ?2)
   INSERT INTO emails (dedupe_key, kind, audience, booking_id, to_addr, subject, rank, status, message_id, attempts, created_at_ms, updated_at_ms, sent_at_ms)
   SELECT 'booking_confirmation:BKBENCH' || i, 'booking_confirmation', 'client', 'BKBENCH' || i, 'guest' || i || '@example.com', 'Your stay is confirmed', 1, 'sent', '<bkbench' || i || '@example.com>', 1, ?3 - ${DAY}, ?3 - ${DAY}, ?3 - ${DAY} FROM s`,
  `WITH RECURSIVE s(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM s WHERE i < ?2)
   INSERT INTO raw_events (source, event_id, event_name, status, headers_json, body, received_at_ms, instance_id)
   SELECT 'liteapi', 'evbench' || i, 'booking.book', 'started', '{}', '{"bench":' || i || '}', ?3 - i, 'e-liteapi-x-evbench' || i FROM s`,
];

function delivery(i, tag) {
  const envelope = structuredClone(confirmed);
  delete envelope._modeled_on;
  envelope.event_id = `evdue_${tag}_${i}`;
  const response = JSON.parse(envelope.response);
  response.data.bookingId = `BKDUE_${tag}_${i}`;
  envelope.response = JSON.stringify(response);
  return JSON.stringify(envelope);
}

async function reset() {
  for (const t of ["repairs", "scheduled_sends", "emails", "bookings", "contacts", "raw_events"]) {
    await env.DB.prepare(`DELETE FROM ${t}`).run();
  }
}

async function tick() {
  const lines = [];
  const log = console.log;
  console.log = (...args) => {
    if (typeof args[0] === "string" && args[0].startsWith("sweeper: ")) lines.push(args[0]);
    else log(...args);
  };
  const ctx = createExecutionContext();
  const started = performance.now();
  try {
    await Engine.prototype.scheduled.call({ env, ctx }, createScheduledController({ cron: "*/5 * * * *" }));
    await waitOnExecutionContext(ctx);
  } finally {
    console.log = log;
  }
  const ms = performance.now() - started;
  expect(lines).toHaveLength(1);
  return { ms, report: JSON.parse(lines[0].slice("sweeper: ".length)) };
}

it("sweeper tick: rows read and wall time against table size", async () => {
  for (const n of SIZES) {
    for (const due of DUE) {
      await reset();
      const now = Date.now();
      for (let start = 0; start < n; start += BATCH) {
        for (const sql of fills) {
          await env.DB.prepare(sql).bind(start, Math.min(n, start + BATCH) - 1, now).run();
        }
      }
      const tag = `${n}_${due}`;
      for (let i = 0; i < due; i++) {
        await env.DB.prepare(
          "INSERT INTO raw_events (source, event_id, event_name, status, headers_json, body, received_at_ms) VALUES ('liteapi', ?, 'booking.book', 'received', '{}', ?, ?)",
        )
          .bind(`evdue_${tag}_${i}`, delivery(i, tag), now - 3_600_000)
          .run();
        await env.DB.prepare(
          "INSERT INTO raw_events (source, event_id, event_name, status, headers_json, body, received_at_ms) VALUES ('liteapi', ?, 'booking.book', 'started', '{}', 'old', ?)",
        )
          .bind(`evold_${tag}_${i}`, now - 400 * DAY)
          .run();
      }
      await env.DB.prepare("INSERT INTO contacts (email, created_at_ms, updated_at_ms) VALUES ('due-guest@example.com', ?1, ?1) ON CONFLICT DO NOTHING")
        .bind(now)
        .run();
      for (let i = 0; i < due; i++) {
        const bookingId = `BKDUE_${tag}_${i}`;
        await env.DB.prepare(
          "INSERT INTO bookings (booking_id, source, kind, contact_email, status, hotel_name, checkin, checkout, details_json, created_at_ms, updated_at_ms, journey_version) VALUES (?, 'liteapi', 'hotel', 'due-guest@example.com', 'CANCELLED', 'Example Harbour Hotel', '2027-06-12', '2027-06-15', '{}', ?, ?, 1) ON CONFLICT DO NOTHING",
        )
          .bind(`${bookingId}_sched`, now, now)
          .run();
        await env.DB.prepare(
          "INSERT INTO scheduled_sends (booking_id, kind, journey_version, due_at_ms, status, planned_at_ms, instance_id) VALUES (?, 'arrival_guide', 1, ?, 'planned', ?, ?)",
        )
          .bind(`${bookingId}_sched`, now - 3_600_000, now - DAY, `e-liteapi-x-gone_${tag}_${i}`)
          .run();
        const email = {
          dedupeKey: `booking_confirmation:${bookingId}_claimed`,
          kind: "booking_confirmation",
          audience: "client",
          rank: "booking",
          bookingId: `${bookingId}_claimed`,
          to: `claimed${i}@example.com`,
          subject: "Your stay is confirmed",
          text: "Hello, your stay is confirmed.",
          html: "<p>Hello, your stay is confirmed.</p>",
          messageId: `<claimed_${tag}_${i}@example.com>`,
        };
        await env.DB.prepare(
          "INSERT INTO emails (dedupe_key, kind, audience, booking_id, to_addr, subject, rank, status, message_id, attempts, created_at_ms, updated_at_ms, payload_json, swept_at_ms) VALUES (?, 'booking_confirmation', 'client', ?, ?, ?, 1, 'claimed', ?, 0, ?, ?, ?, ?)",
        )
          .bind(email.dedupeKey, email.bookingId, email.to, email.subject, email.messageId, now - 3_600_000, now - 3_600_000, JSON.stringify(email), now - 3_600_000)
          .run();
      }
      const { ms, report } = await tick();
      console.log("BENCH_SWEEPER " + JSON.stringify({ n, due, ms: Math.round(ms * 10) / 10, ...report }));
      expect(report.journeys_started).toBe(due);
      expect(report.raw_bodies_pruned).toBe(due);
      expect(report.scheduled_skipped).toBe(due);
      expect(report.emails_enqueued).toBe(due);
    }
  }
});
