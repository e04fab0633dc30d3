// The sweeper (Cron Trigger → src/sweeper/): D1 is the authority on due work. Faults are injected
// by leaving rows in D1 the way a crash would (a delivery stored but its journey never started),
// then the Worker's own scheduled handler runs, as the cron would run it.
import { env, introspectWorkflowInstance, runInDurableObject, runDurableObjectAlarm, createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import Engine from "../../src/entry.mjs";
import { describe, it, expect } from "vitest";
import {
  bookingDelivery,
  enqueueEmail,
  instanceIdFor,
  item,
  outboxState,
  outboxStub,
  postLiteapi,
  rows,
  sendThrough,
  setOutboxState,
  unique,
} from "./helpers.mjs";

const MINUTE = 60_000;
const DAY = 86_400_000;

/** One cron tick through the Worker's exported scheduled handler (as the runtime calls it). */
async function sweep() {
  const ctx = createExecutionContext();
  const controller = createScheduledController({ cron: "*/5 * * * *", scheduledTime: new Date() });
  await Engine.prototype.scheduled.call({ env, ctx }, controller);
  await waitOnExecutionContext(ctx);
}

/** A liteAPI delivery stored as `received` at `receivedAt` whose journey was never started. */
async function stuckDelivery(receivedAt = Date.now() - 20 * MINUTE) {
  const d = bookingDelivery();
  await env.DB.prepare(
    "INSERT INTO raw_events (source, event_id, event_name, status, headers_json, body, received_at_ms) VALUES ('liteapi', ?, 'booking.book', 'received', '{}', ?, ?)",
  )
    .bind(d.eventId, d.body, receivedAt)
    .run();
  return d;
}

async function repairsFor(instanceId) {
  return rows("SELECT kind, subject FROM repairs WHERE subject = ?", instanceId);
}

/** Runs `body` with the journey of `eventId` under introspection (sleeps skipped), then waits
 * for that journey to complete. */
async function withJourney(eventId, body) {
  const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(eventId));
  try {
    await instance.modify(async (m) => {
      await m.disableSleeps();
    });
    const out = await body();
    await instance.waitForStatus("complete");
    return out;
  } finally {
    await instance.dispose();
  }
}

describe("sweeper", () => {
  it("a raw event stuck received is started by the sweeper, once; a later sweep does nothing", async () => {
    const d = await stuckDelivery();
    await withJourney(d.eventId, sweep);
    await sweep();
    // A redelivery afterwards is a duplicate.
    expect(await (await postLiteapi(d.body)).json()).toEqual({ status: "duplicate", eventId: d.eventId });
    expect(await rows("SELECT status, instance_id FROM raw_events WHERE event_id = ?", d.eventId)).toEqual([
      { status: "started", instance_id: instanceIdFor(d.eventId) },
    ]);
    expect(await repairsFor(instanceIdFor(d.eventId))).toEqual([
      { kind: "journey_started", subject: instanceIdFor(d.eventId) },
    ]);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE booking_id = ?", d.bookingId)).toEqual([{ n: 5 }]); // confirmation, owner alert, arrival guide, check-in note, thank-you (a stay ahead)
  });

  it("a raw event still within the grace period is left to its own delivery", async () => {
    const d = await stuckDelivery(Date.now() - MINUTE);
    await sweep();
    expect(await rows("SELECT status FROM raw_events WHERE event_id = ?", d.eventId)).toEqual([{ status: "received" }]);
    expect(await repairsFor(instanceIdFor(d.eventId))).toEqual([]);
    // Leave nothing stuck behind for later tests: the supplier's redelivery starts it.
    await withJourney(d.eventId, async () => expect((await postLiteapi(d.body)).status).toBe(202));
  });

  it("a supplier redelivery racing the sweeper and two overlapping sweeps start one journey, record one repair at most", async () => {
    const d = await stuckDelivery();
    const answer = await withJourney(d.eventId, async () => {
      const [, , r] = await Promise.all([sweep(), sweep(), postLiteapi(d.body)]);
      return r;
    });
    expect([200, 202]).toContain(answer.status);
    expect((await repairsFor(instanceIdFor(d.eventId))).length).toBeLessThanOrEqual(1);
    expect(await rows("SELECT status FROM raw_events WHERE event_id = ?", d.eventId)).toEqual([{ status: "started" }]);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE booking_id = ?", d.bookingId)).toEqual([{ n: 5 }]); // confirmation, owner alert, arrival guide, check-in note, thank-you (a stay ahead)
  });

  it("two sweeps at the same time over one stuck event: one journey, one repair record", async () => {
    const d = await stuckDelivery();
    await withJourney(d.eventId, () => Promise.all([sweep(), sweep()]));
    expect(await repairsFor(instanceIdFor(d.eventId))).toHaveLength(1);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE booking_id = ?", d.bookingId)).toEqual([{ n: 5 }]); // confirmation, owner alert, arrival guide, check-in note, thank-you (a stay ahead)
  });

  it("retention prunes only bodies that are old and finished; the rows stay", async () => {
    const now = Date.now();
    const insert = (id, status, at) =>
      env.DB.prepare(
        "INSERT INTO raw_events (source, event_id, event_name, status, headers_json, body, received_at_ms) VALUES ('liteapi', ?, 'booking.book', ?, '{}', 'kept body', ?)",
      )
        .bind(id, status, at)
        .run();
    const tag = `ret_${now.toString(36)}`;
    await insert(`${tag}_old_started`, "started", now - 31 * DAY);
    await insert(`${tag}_old_ignored`, "ignored", now - 40 * DAY);
    await insert(`${tag}_new_started`, "started", now - 29 * DAY);
    // Old but unfinished: its body is what the sweeper would start it from. (It is not a valid
    // delivery, so the sweeper cannot start it and it stays `received`.)
    await insert(`${tag}_old_received`, "received", now - 31 * DAY);
    await sweep();
    const left = await rows("SELECT event_id, body FROM raw_events WHERE event_id LIKE ? ORDER BY event_id", `${tag}%`);
    expect(left).toEqual([
      { event_id: `${tag}_new_started`, body: "kept body" },
      { event_id: `${tag}_old_ignored`, body: "" },
      { event_id: `${tag}_old_received`, body: "kept body" },
      { event_id: `${tag}_old_started`, body: "" },
    ]);
    await env.DB.prepare("UPDATE raw_events SET status = 'rejected' WHERE event_id = ?").bind(`${tag}_old_received`).run();
  });

  it("a lost outbox alarm with queued mail is re-armed by the sweeper, once, and the mail goes out", async () => {
    await outboxState(); // the outbox creates its tables on first use
    // Mail waits behind the client gap (as it does for 150–160 s in production)…
    await setOutboxState("next_slot_at_ms", Date.now() + 10 * MINUTE);
    const key = await enqueueEmail(`${unique("rearm")}@example.com`);
    expect(item(await outboxState(), key).status).toBe("queued");
    // The fault: the alarm is gone while mail waits, and its slot is due.
    await runInDurableObject(outboxStub(), async (_o, st) => {
      await st.storage.deleteAlarm();
      st.storage.sql.exec("UPDATE state SET value = 0 WHERE key = 'next_slot_at_ms'");
    });
    // Without the sweeper it stays stuck: there is no alarm to run.
    expect(await runDurableObjectAlarm(outboxStub())).toBe(false);
    expect(item(await outboxState(), key).status).toBe("queued");
    const before = await rows("SELECT COUNT(*) AS n FROM repairs WHERE kind = 'outbox_rearmed'");

    await Promise.all([sweep(), sweep()]);
    expect(await rows("SELECT COUNT(*) AS n FROM repairs WHERE kind = 'outbox_rearmed'")).toEqual([{ n: before[0].n + 1 }]);
    // With its alarm back, the outbox sends the mail (after any older mail ahead of it, one per
    // client slot; the slots are passed at once here).
    const state = await sendThrough(key);
    expect(item(state, key)).toMatchObject({ status: "sent", attempts: 1 });

    // A sweep with the alarm in place records nothing more.
    await sweep();
    expect(await rows("SELECT COUNT(*) AS n FROM repairs WHERE kind = 'outbox_rearmed'")).toEqual([{ n: before[0].n + 1 }]);
    expect(item(await outboxState(), key).attempts).toBe(1);
  });
});
