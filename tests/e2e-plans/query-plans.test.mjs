// Every D1 query the engine makes on its common paths reads through an index: the journeys,
// duplicates, a cancellation, a sweeper tick and the admin pages run against the counting Worker
// (bench/cost/entry.mjs), which keeps every SQL text the engine prepared; each is then asked for
// its plan (`EXPLAIN QUERY PLAN`, https://www.sqlite.org/eqp.html) on the same D1 and must not
// `SCAN` a table that grows with the business (a full scan reads every row: D1 bills rows read).
import { SELF, env, createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { it, expect } from "vitest";
import Engine, { countedEnv } from "../../bench/cost/entry.mjs";
import { adminCookie, adminPage, futureBooking, liteapiEvent, postLiteapi, runLiteapi, runOutbox, sendThrough } from "../e2e/helpers.mjs";

/** Tables whose size does not grow with bookings, guests or time, with the reason. */
const SMALL = {
  hotel_zones: "one row per hotel zone override",
  webhook_subscribers: "the operator's few outbound webhook subscribers",
  d1_migrations: "one row per migration",
  campaigns: "the owner's campaigns, a handful a month",
};

/**
 * Statements that read a growing table in full on purpose, with the reason (each is one admin page
 * view, not a path that runs per booking or per email).
 */
const WHOLE_TABLE = {
  "SELECT status, COUNT(*) AS n FROM emails GROUP BY status ORDER BY status":
    "the overview's count of every email on record by status: the emails_by_status index, not the table",
};

/**
 * The tables a plan reads in full: `SCAN t` lines (`SCAN CONSTANT ROW` is no table). A scan that
 * walks an index in the query's ORDER BY and stops at its LIMIT (no temporary B-tree for the
 * order) reads only the rows it returns, so it does not count.
 */
export function scannedTables(planRows, sql = "") {
  const bounded = /\bLIMIT\b/i.test(sql) && !planRows.some((r) => /TEMP B-TREE/.test(r.detail));
  return planRows
    .map((r) => /^SCAN (\w+)( USING (COVERING )?INDEX)?/.exec(r.detail))
    .filter((m) => m && m[1] !== "CONSTANT" && !(bounded && m[2]))
    .map((m) => m[1]);
}

/** Placeholders of a statement: the highest `?N`, or the number of bare `?`. */
function placeholders(sql) {
  const numbered = [...sql.matchAll(/\?(\d+)/g)].map((m) => Number(m[1]));
  if (numbered.length) return Math.max(...numbered);
  return (sql.match(/\?/g) ?? []).length;
}

it("the scanner reads SCAN lines and ignores SEARCH lines", () => {
  expect(scannedTables([{ detail: "SCAN bookings" }, { detail: "SEARCH emails USING INDEX emails_by_booking (booking_id=?)" }, { detail: "SCAN raw_events USING INDEX raw_events_by_time" }])).toEqual(["bookings", "raw_events"]);
  // An index walked in order up to a LIMIT is bounded; the same walk behind a sort is not.
  expect(scannedTables([{ detail: "SCAN repairs USING INDEX repairs_by_time" }], "SELECT * FROM repairs ORDER BY at_ms DESC LIMIT 10")).toEqual([]);
  expect(scannedTables([{ detail: "SCAN repairs USING INDEX repairs_by_time" }, { detail: "USE TEMP B-TREE FOR ORDER BY" }], "SELECT * FROM repairs ORDER BY kind LIMIT 10")).toEqual(["repairs"]);
  expect(scannedTables([{ detail: "SCAN bookings" }], "SELECT * FROM bookings LIMIT 10")).toEqual(["bookings"]);
  expect(scannedTables([{ detail: "SCAN CONSTANT ROW" }])).toEqual([]);
});

it("no common path scans a growing table", async () => {
  // The paths: a booking's whole journey and its emails, a duplicate, a cancellation, a sweeper
  // tick, and the owner's admin pages over them.
  const d = futureBooking({ checkinInDays: 30 });
  await runLiteapi(d);
  await runOutbox();
  await sendThrough(`booking_confirmation:${d.bookingId}`);
  expect((await postLiteapi(d.body)).status).toBeLessThan(300);
  await runLiteapi(liteapiEvent("booking.cancel", { bookingId: d.bookingId, status: "CANCELLED", cancellation_fee: 0, refund_amount: 540, currency: "EUR" }));
  await runOutbox();
  const ctx = createExecutionContext();
  await Engine.prototype.scheduled.call({ env: countedEnv(env, () => "sweeper"), ctx }, createScheduledController({ cron: "*/5 * * * *", scheduledTime: new Date() }));
  await waitOnExecutionContext(ctx);
  const cookie = await adminCookie();
  for (const path of ["/admin", `/admin/booking?id=${d.bookingId}`, `/admin/bookings?q=${d.bookingId}`, "/admin/events", "/admin/queue", "/admin/holds", "/admin/suppressions"]) {
    await adminPage(path, cookie);
  }

  const seen = await (await SELF.fetch("https://engine.test/__bench/sql")).json();
  expect(seen.length).toBeGreaterThan(30);
  const offenders = [];
  for (const sql of seen) {
    if (!/^\s*(SELECT|UPDATE|DELETE|INSERT|WITH)/i.test(sql) || sql in WHOLE_TABLE) continue;
    const binds = Array(placeholders(sql)).fill(null);
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`).bind(...binds).all();
    const scans = scannedTables(plan.results, sql).filter((t) => !(t in SMALL));
    if (scans.length) offenders.push(`${scans.join(", ")}: ${sql.replace(/\s+/g, " ").slice(0, 300)}`);
  }
  expect(offenders, `statements that scan a growing table:\n${offenders.join("\n")}`).toEqual([]);
});
