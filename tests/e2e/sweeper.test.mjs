// The sweeper (Cron Trigger → src/sweeper/): D1 is the authority on due work. Faults are injected
// by leaving rows in D1 the way a crash would (a delivery stored but its journey never started),
// then the Worker's own scheduled handler runs, as the cron would run it.
import { env, introspectWorkflowInstance, runInDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import {
  book,
  bookingDelivery,
  enqueueEmail,
  eventually,
  handedOver,
  instanceIdFor,
  item,
  outboxState,
  outboxStub,
  postLiteapi,
  rows,
  sendThrough,
  setOutboxState,
  sweep,
  unique,
} from "./helpers.mjs";

const MINUTE = 60_000;
const DAY = 86_400_000;


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
    // Whoever created the instance first: the redelivery (202, no repair) or the sweeper (the
    // redelivery answers 200 duplicate, one repair).
    expect(await repairsFor(instanceIdFor(d.eventId))).toHaveLength(answer.status === 200 ? 1 : 0);
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
    const insert = (id, status, at, source = "liteapi") =>
      env.DB.prepare(
        "INSERT INTO raw_events (source, event_id, event_name, status, headers_json, body, received_at_ms) VALUES (?, ?, 'booking.book', ?, '{}', 'kept body', ?)",
      )
        .bind(source, id, status, at)
        .run();
    const tag = `ret_${now.toString(36)}`;
    await insert(`${tag}_old_started`, "started", now - 31 * DAY);
    await insert(`${tag}_old_ignored`, "ignored", now - 40 * DAY);
    await insert(`${tag}_new_started`, "started", now - 29 * DAY);
    // Old but unfinished: its body is what it would be started from, so the body stays. (From a
    // source this build does not know, e.g. written by a newer release before a rollback: the
    // sweeper leaves it `received` for a build that knows it.)
    await insert(`${tag}_old_received`, "received", now - 31 * DAY, "newsource");
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

  it("a stuck raw event that can never start a journey is marked errored with the reason, once; one that starts none is marked ignored", async () => {
    const bad = unique("evt_bad_");
    await env.DB.prepare(
      "INSERT INTO raw_events (source, event_id, event_name, status, headers_json, body, received_at_ms) VALUES ('liteapi', ?, 'booking.book', 'received', '{}', 'not json', ?)",
    )
      .bind(bad, Date.now() - 20 * MINUTE)
      .run();
    const quiet = bookingDelivery();
    const envelope = JSON.parse(quiet.body);
    envelope.event_name = "booking.somethingNew";
    await env.DB.prepare(
      "INSERT INTO raw_events (source, event_id, event_name, status, headers_json, body, received_at_ms) VALUES ('liteapi', ?, 'booking.somethingNew', 'received', '{}', ?, ?)",
    )
      .bind(quiet.eventId, JSON.stringify(envelope), Date.now() - 20 * MINUTE)
      .run();
    await Promise.all([sweep(), sweep()]);
    await sweep();
    expect(await rows("SELECT status, error FROM raw_events WHERE event_id = ?", bad)).toEqual([
      { status: "errored", error: expect.stringMatching(/^stored event: .*JSON/) },
    ]);
    expect(await rows("SELECT kind, reason FROM repairs WHERE subject = ?", `liteapi:${bad}`)).toEqual([
      { kind: "event_errored", reason: expect.stringMatching(/cannot start a journey/) },
    ]);
    expect(await rows("SELECT status, instance_id FROM raw_events WHERE event_id = ?", quiet.eventId)).toEqual([
      { status: "ignored", instance_id: null },
    ]);
    expect(await rows("SELECT COUNT(*) AS n FROM repairs WHERE subject LIKE ?", `%${quiet.eventId}%`)).toEqual([{ n: 0 }]);
  });

  it("stuck events the sweeper cannot start yet never hide a newer one", async () => {
    const tag = unique("blocked_");
    // More un-startable events (a source this build does not know) than the test batch (SWEEP_BATCH), all older.
    const insert = (source, id, body, at) =>
      env.DB.prepare(
        "INSERT INTO raw_events (source, event_id, event_name, status, headers_json, body, received_at_ms) VALUES (?, ?, 'booking.book', 'received', '{}', ?, ?)",
      )
        .bind(source, id, body, at)
        .run();
    const batch = Number(env.SWEEP_BATCH ?? 50);
    for (let i = 0; i < batch + 2; i += 1) await insert("newsource", `${tag}_${i}`, "{}", Date.now() - DAY - i);
    // A newer stuck delivery, with a control character in its hotel name: started, and read as
    // the route reads it (normalised).
    const d = bookingDelivery();
    const envelope = JSON.parse(d.body);
    const response = JSON.parse(envelope.response);
    response.data.hotel.name = "Harbour\u0007 Hotel";
    envelope.response = JSON.stringify(response);
    await insert("liteapi", d.eventId, JSON.stringify(envelope), Date.now() - 20 * MINUTE);
    await withJourney(d.eventId, async () => {
      await sweep(); // tries the oldest `batch` blocked ones
      await sweep(); // the newer delivery comes first among never-tried rows
    });
    expect(await rows("SELECT status FROM raw_events WHERE event_id = ?", d.eventId)).toEqual([{ status: "started" }]);
    const [booking] = await rows("SELECT hotel_name FROM bookings WHERE booking_id = ?", d.bookingId);
    expect(booking.hotel_name).not.toMatch(/\u0007/);
    expect(await rows("SELECT COUNT(*) AS n FROM raw_events WHERE event_id LIKE ? AND status = 'received' AND swept_at_ms > 0", `${tag}_%`)).toEqual([
      { n: batch + 2 },
    ]);
    await env.DB.prepare("UPDATE raw_events SET status = 'rejected' WHERE event_id LIKE ?").bind(`${tag}_%`).run();
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
  it("a journey instance terminated between two sends: the sweeper sends the next due email once; a live instance keeps its own", async () => {
    // A real (not introspected) instance: it hands over its first emails, then sleeps for days.
    const d = bookingDelivery();
    expect((await postLiteapi(d.body)).status).toBe(202);
    await handedOver(d.bookingId);
    const instance = await env.JOURNEY.get(instanceIdFor(d.eventId));
    expect(["waiting", "running"]).toContain((await instance.status()).status);
    const emailsOf = (kind) => rows("SELECT dedupe_key, status FROM emails WHERE booking_id = ? AND kind = ?", d.bookingId, kind);
    const plannedRow = async (kind) =>
      (await rows("SELECT status, reason, instance_id FROM scheduled_sends WHERE booking_id = ? AND kind = ?", d.bookingId, kind))[0];
    expect(await plannedRow("arrival_guide")).toEqual({ status: "planned", reason: null, instance_id: instanceIdFor(d.eventId) });
    // The arrival guide is due (an outage kept it past its time, or the clock moved on).
    const due = Date.now() - 20 * MINUTE;
    await env.DB.prepare("UPDATE scheduled_sends SET due_at_ms = ? WHERE booking_id = ? AND kind = 'arrival_guide'").bind(due, d.bookingId).run();
    // Its instance is alive (sleeping): the sweeper leaves the send to it.
    await sweep();
    expect(await plannedRow("arrival_guide")).toMatchObject({ status: "planned" });
    expect(await emailsOf("arrival_guide")).toEqual([]);

    // The fault: the instance is terminated between the confirmation and the arrival guide.
    await instance.terminate();
    await eventually(async () => expect((await instance.status()).status).toBe("terminated"));
    // The first sweep left the send to the live instance; a grace period later it looks again.
    await env.DB.prepare("UPDATE scheduled_sends SET swept_at_ms = ? WHERE booking_id = ? AND kind = 'arrival_guide'").bind(due, d.bookingId).run();
    // Two overlapping sweeps, then a third: one arrival guide, one repair.
    await Promise.all([sweep(), sweep()]);
    await sweep();
    expect(await plannedRow("arrival_guide")).toMatchObject({ status: "sent" });
    const guide = await emailsOf("arrival_guide");
    expect(guide).toEqual([{ dedupe_key: expect.stringMatching(/^arrival_guide:/), status: "queued" }]);
    expect((await outboxState()).items.filter((i) => i.dedupe_key === guide[0].dedupe_key)).toEqual([
      expect.objectContaining({ status: "queued" }),
    ]);
    expect(await rows("SELECT kind, subject FROM repairs WHERE kind = 'scheduled_send' AND subject LIKE ?", `${d.bookingId}:%`)).toEqual([
      { kind: "scheduled_send", subject: `${d.bookingId}:arrival_guide:v1` },
    ]);
    // Not due yet: the check-in note and the thank-you stay planned.
    expect(await plannedRow("checkin_day")).toMatchObject({ status: "planned" });
    expect(await plannedRow("thank_you")).toMatchObject({ status: "planned" });

    // The check-in note's moment passed while nobody sent it: skipped as stale, recorded, not sent.
    await env.DB.prepare("UPDATE scheduled_sends SET due_at_ms = ?, expires_at_ms = ? WHERE booking_id = ? AND kind = 'checkin_day'")
      .bind(Date.now() - 2 * DAY, Date.now() - DAY, d.bookingId)
      .run();
    await sweep();
    const note = await plannedRow("checkin_day");
    expect(note.status).toBe("skipped");
    expect(note.reason).toMatch(/stale/);
    expect(await emailsOf("checkin_day")).toEqual([]);
    expect(await rows("SELECT reason FROM repairs WHERE subject = ?", `${d.bookingId}:checkin_day:v1`)).toEqual([
      { reason: expect.stringMatching(/skipped \(.*stale/) },
    ]);

    // A cancelled booking's due send is skipped, never sent, by the sweeper too.
    await env.DB.prepare("UPDATE bookings SET status = 'CANCELLED' WHERE booking_id = ?").bind(d.bookingId).run();
    await env.DB.prepare("UPDATE scheduled_sends SET due_at_ms = ? WHERE booking_id = ? AND kind = 'thank_you'").bind(due, d.bookingId).run();
    await sweep();
    expect(await plannedRow("thank_you")).toMatchObject({ status: "skipped", reason: expect.stringMatching(/cancel/) });
    expect(await emailsOf("thank_you")).toEqual([]);
  });

  it("a past-due send the sweeper cannot make is recorded once, left planned, and looked at again only after the grace period", async () => {
    const bookingId = unique("BK_gone_");
    // Its instance does not exist, and its kind is one this build cannot send (a row written by a
    // newer or broken release): the sweeper's send fails.
    await env.DB.prepare(
      "INSERT INTO scheduled_sends (booking_id, kind, journey_version, due_at_ms, status, planned_at_ms, instance_id) VALUES (?, 'postcard', 1, ?, 'planned', ?, ?)",
    )
      .bind(bookingId, Date.now() - 20 * MINUTE, Date.now() - DAY, `e-liteapi-x-${bookingId.toLowerCase()}`)
      .run();
    const row = () => rows("SELECT status, swept_at_ms > 0 AS looked FROM scheduled_sends WHERE booking_id = ?", bookingId);
    const sweptAt = async () => (await rows("SELECT swept_at_ms FROM scheduled_sends WHERE booking_id = ?", bookingId))[0].swept_at_ms;
    await Promise.all([sweep(), sweep()]);
    expect(await row()).toEqual([{ status: "planned", looked: 1 }]);
    const firstLook = await sweptAt();
    // Within the grace period it is not looked at again.
    await sweep();
    expect(await sweptAt()).toBe(firstLook);
    // A grace period later it is (and fails again; still one record).
    await env.DB.prepare("UPDATE scheduled_sends SET swept_at_ms = ? WHERE booking_id = ?").bind(Date.now() - 20 * MINUTE, bookingId).run();
    await sweep();
    expect(await sweptAt()).toBeGreaterThan(Date.now() - MINUTE);
    expect(await row()).toEqual([{ status: "planned", looked: 1 }]);
    expect(await rows("SELECT kind, reason FROM repairs WHERE subject = ?", `${bookingId}:postcard:v1`)).toEqual([
      { kind: "send_failed", reason: expect.stringMatching(/could not send it: .*unknown scheduled kind/) },
    ]);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE booking_id = ?", bookingId)).toEqual([{ n: 0 }]);
  });

  it("emails D1 holds as claimed or queued but the outbox does not are handed over once; the ones it cannot restore are reported", async () => {
    await outboxState();
    const old = Date.now() - 20 * MINUTE;
    // `sweptAt`: an earlier tick already found the row unsettled (0 = never looked at).
    const claimRow = (email, status, payload, sweptAt = old) =>
      env.DB.prepare(
        "INSERT INTO emails (dedupe_key, kind, audience, booking_id, to_addr, subject, rank, status, message_id, attempts, created_at_ms, updated_at_ms, payload_json, swept_at_ms) VALUES (?, ?, 'client', ?, ?, ?, 2, ?, ?, 0, ?, ?, ?, ?)",
      )
        .bind(email.dedupeKey, email.kind, email.bookingId, email.to, email.subject, status, email.messageId, old, old, payload, sweptAt)
        .run();
    const email = (tag) => {
      const bookingId = unique(`BK_${tag}_`);
      return {
        dedupeKey: `booking_confirmation:${bookingId}`,
        kind: "booking_confirmation",
        audience: "client",
        rank: "booking",
        bookingId,
        to: `${bookingId.toLowerCase()}@example.com`,
        subject: "Your stay is confirmed",
        text: "Hello, your stay is confirmed.",
        html: "<p>Hello, your stay is confirmed.</p>",
        messageId: `<${bookingId.toLowerCase()}@example.com>`,
      };
    };
    // Claimed, then the step died before the outbox saw it.
    const claimed = email("claimed");
    await claimRow(claimed, "claimed", JSON.stringify(claimed));
    // Queued in D1, but the outbox lost it.
    const lost = email("lost");
    await claimRow(lost, "queued", JSON.stringify(lost));
    // Claimed before D1 kept a copy: cannot be handed over, reported.
    const bare = email("bare");
    await claimRow(bare, "claimed", null);
    // Its kept copy is damaged: the hand-over fails, recorded once, left for a later look.
    const broken = email("broken");
    await claimRow(broken, "claimed", "{not json");
    // In the outbox, but the mark after the enqueue was lost: D1 catches up, no repair.
    const marked = email("marked");
    await claimRow(marked, "claimed", JSON.stringify(marked));
    await outboxStub().fetch("https://outbox/enqueue", { method: "POST", body: JSON.stringify(marked) });

    // Claimed with old logical times but never looked at: its step may still be between claim
    // and enqueue, so the first look only notes it.
    const firstLook = email("first");
    await claimRow(firstLook, "claimed", JSON.stringify(firstLook), 0);

    await Promise.all([sweep(), sweep()]);
    await sweep();
    const state = await outboxState();
    expect(item(state, firstLook.dedupeKey)).toBeUndefined();
    expect(await rows("SELECT status, swept_at_ms > 0 AS looked FROM emails WHERE dedupe_key = ?", firstLook.dedupeKey)).toEqual([
      { status: "claimed", looked: 1 },
    ]);
    expect(await rows("SELECT kind FROM repairs WHERE subject = ?", firstLook.dedupeKey)).toEqual([]);
    // A grace period later it is still unsettled: handed over.
    await env.DB.prepare("UPDATE emails SET swept_at_ms = ? WHERE dedupe_key = ?").bind(old, firstLook.dedupeKey).run();
    await sweep();
    expect(item(await outboxState(), firstLook.dedupeKey)).toMatchObject({ status: "queued" });
    for (const e of [claimed, lost, marked]) {
      expect(item(state, e.dedupeKey), e.dedupeKey).toMatchObject({ status: "queued", attempts: 0 });
    }
    expect(item(state, bare.dedupeKey)).toBeUndefined();
    const status = async (e) => (await rows("SELECT status FROM emails WHERE dedupe_key = ?", e.dedupeKey))[0].status;
    expect(await status(claimed)).toBe("queued");
    expect(await status(lost)).toBe("queued");
    expect(await status(marked)).toBe("queued");
    expect(await status(bare)).toBe("claimed");
    const repaired = async (e) => rows("SELECT kind FROM repairs WHERE subject = ?", e.dedupeKey);
    expect(await repaired(claimed)).toEqual([{ kind: "enqueued" }]);
    expect(await repaired(lost)).toEqual([{ kind: "enqueued" }]);
    expect(await repaired(marked)).toEqual([]);
    expect(await repaired(bare)).toEqual([{ kind: "unrestorable" }]);
    expect(item(state, broken.dedupeKey)).toBeUndefined();
    expect(await status(broken)).toBe("claimed");
    expect(await rows("SELECT kind, reason FROM repairs WHERE subject = ?", broken.dedupeKey)).toEqual([
      { kind: "send_failed", reason: expect.stringMatching(/could not hand it over again/) },
    ]);
    // The outbox sends each restored email once, and its outcome clears D1's kept copy.
    const sent = await sendThrough(claimed.dedupeKey);
    expect(item(sent, claimed.dedupeKey)).toMatchObject({ status: "sent", attempts: 1 });
    expect(item(await sendThrough(lost.dedupeKey), lost.dedupeKey)).toMatchObject({ status: "sent", attempts: 1 });
    await eventually(async () =>
      expect(await rows("SELECT status, payload_json FROM emails WHERE dedupe_key = ?", claimed.dedupeKey)).toEqual([
        { status: "sent", payload_json: null },
      ]),
    );
  });

  it("outbox retention deletes only finished rows older than the retention; dead letters, queued mail and the D1 record stay", async () => {
    await outboxState();
    const sentKey = await enqueueEmail(`${unique("ret-sent")}@example.com`);
    await sendThrough(sentKey);
    const deadKey = await enqueueEmail(`${unique("ret-dead")}@example.com`);
    const queuedKey = await enqueueEmail(`${unique("ret-queued")}@example.com`);
    const recentKey = await enqueueEmail(`${unique("ret-recent")}@example.com`);
    await sendThrough(recentKey);
    const longAgo = Date.now() - 31 * DAY;
    await runInDurableObject(outboxStub(), async (_o, st) => {
      st.storage.sql.exec("UPDATE queue SET status = 'dead' WHERE dedupe_key = ?", deadKey);
      for (const k of [sentKey, deadKey, queuedKey]) st.storage.sql.exec("UPDATE queue SET updated_at_ms = ? WHERE dedupe_key = ?", longAgo, k);
      // Keep the queued one from being sent during this test.
      st.storage.sql.exec("UPDATE queue SET status = 'waiting', not_before_ms = ? WHERE dedupe_key = ?", Date.now() + DAY, queuedKey);
    });
    const sentSeq = item(await outboxState(), sentKey).seq;
    await sweep();
    const state = await outboxState();
    expect(item(state, sentKey)).toBeUndefined();
    expect(state.attempts.filter((a) => a.seq === sentSeq)).toEqual([]);
    expect(item(state, deadKey)).toMatchObject({ status: "dead" });
    expect(item(state, queuedKey)).toMatchObject({ status: "waiting" });
    expect(item(state, recentKey)).toMatchObject({ status: "sent" });
    // Cleanup: keep these two from being sent by later tests. (That a pruned email is never
    // handed over again is the test "an email sent and then pruned …" below.)
    await runInDurableObject(outboxStub(), async (_o, st) => {
      st.storage.sql.exec("UPDATE queue SET status = 'skipped' WHERE dedupe_key IN (?, ?)", deadKey, queuedKey);
    });
  });

  it("an email sent and then pruned from the outbox is never handed over again when its key comes back", async () => {
    const d = await book();
    const key = `booking_confirmation:${d.bookingId}`;
    expect(item(await sendThrough(key), key)).toMatchObject({ status: "sent", attempts: 1 });
    await eventually(async () => expect(await rows("SELECT status FROM emails WHERE dedupe_key = ?", key)).toEqual([{ status: "sent" }]));
    await runInDurableObject(outboxStub(), async (_o, st) => {
      st.storage.sql.exec("UPDATE queue SET updated_at_ms = ? WHERE dedupe_key = ?", Date.now() - 31 * DAY, key);
    });
    await sweep();
    expect(item(await outboxState(), key)).toBeUndefined();

    // The supplier sends the booking again under a new event id: a second journey delivers the
    // same confirmation key. D1 says sent, so the outbox is not asked again.
    const again = bookingDelivery({ bookingId: d.bookingId });
    const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(again.eventId));
    try {
      await instance.modify(async (m) => {
        await m.disableSleeps();
      });
      expect((await postLiteapi(again.body)).status).toBe(202);
      await instance.waitForStatus("complete");
      expect((await instance.getOutput()).emails).toContainEqual([key, "already_claimed"]);
    } finally {
      await instance.dispose();
    }
    expect(item(await outboxState(), key)).toBeUndefined();
    expect(await rows("SELECT status, attempts FROM emails WHERE dedupe_key = ?", key)).toEqual([{ status: "sent", attempts: 1 }]);
  });
});
