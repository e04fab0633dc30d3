// POST /webhooks/liteapi: authenticity, storage of every delivery, dedupe, one Journey per event.
import { env, introspectWorkflow, introspectWorkflowInstance } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { bookingDelivery, handedOver, instanceIdFor, postLiteapi, rows, unique, TOKEN } from "./helpers.mjs";

describe("liteAPI webhook", () => {
  it("the same booking.book delivered twice starts one journey and claims one email", async () => {
    const d = bookingDelivery();
    const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(d.eventId));
    try {
      const first = await postLiteapi(d.body);
      expect(first.status).toBe(202);
      expect(await first.json()).toMatchObject({ status: "accepted", instanceId: instanceIdFor(d.eventId) });
      await handedOver(d.bookingId); // then asleep until its arrival guide

      const second = await postLiteapi(d.body);
      expect(second.status).toBe(200);
      expect(await second.json()).toEqual({ status: "duplicate", eventId: d.eventId });
    } finally {
      await instance.dispose();
    }
    expect(await rows("SELECT status FROM raw_events WHERE event_id = ?", d.eventId)).toEqual([{ status: "started" }]);
    const emails = await rows("SELECT dedupe_key, status FROM emails WHERE booking_id = ? ORDER BY dedupe_key", d.bookingId);
    expect(emails.map((e) => e.dedupe_key)).toEqual([
      `booking_confirmation:${d.bookingId}`,
      `owner_new_booking:${d.bookingId}`,
    ]);
  });

  it("a delivery stored but never started (the journey's start failed once) is started by the supplier's retry, not left to the sweeper; a duplicate of a started one costs one D1 call", async () => {
    const d = bookingDelivery();
    // The Workflows binding fails once, after the raw event was stored (as a crash or a deploy
    // between the two would leave it).
    const create = env.JOURNEY.create;
    env.JOURNEY.create = async () => {
      env.JOURNEY.create = create;
      throw new Error("journey start failed (injected)");
    };
    const first = await postLiteapi(d.body);
    expect(first.status).toBe(503);
    // Stored, and the failed start let go of, so a retry may start it at once.
    expect(await rows("SELECT status, start_lease_until_ms FROM raw_events WHERE event_id = ?", d.eventId)).toEqual([{ status: "received", start_lease_until_ms: null }]);

    // Had the first delivery died instead (a crash holds the start until its lease runs out), a
    // redelivery within the lease is a duplicate that creates nothing…
    await env.DB.prepare("UPDATE raw_events SET start_lease_until_ms = ? WHERE event_id = ?").bind(Date.now() + 60_000, d.eventId).run();
    const early = await postLiteapi(d.body);
    expect(early.status).toBe(200);
    expect(await early.json()).toEqual({ status: "duplicate", eventId: d.eventId });
    // …and one after it starts the journey (below), like the retry after a failed start.
    await env.DB.prepare("UPDATE raw_events SET start_lease_until_ms = ? WHERE event_id = ?").bind(Date.now() - 1, d.eventId).run();

    // The supplier retries seconds later (no sweeper ran): this delivery starts the journey.
    const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(d.eventId));
    try {
      const retry = await postLiteapi(d.body);
      expect(retry.status).toBe(202);
      expect(await retry.json()).toMatchObject({ status: "accepted", instanceId: instanceIdFor(d.eventId) });
      await handedOver(d.bookingId);
      expect(await rows("SELECT status FROM raw_events WHERE event_id = ?", d.eventId)).toEqual([{ status: "started" }]);
      // The journey this retry started shares the D1 binding the count below watches: let it reach
      // its first sleep (or its end) so none of its own calls land in the count.
      // Locally a sleeping instance still reads "running", so "settled" is: its finished steps
      // (the local runtime's step outputs) unchanged for two seconds.
      const handle = await env.JOURNEY.get(instanceIdFor(d.eventId));
      let steps = -1;
      for (let still = 0; still < 10; ) {
        const now = ((await handle.status()).__LOCAL_DEV_STEP_OUTPUTS ?? []).length;
        still = now === steps ? still + 1 : 0;
        steps = now;
        await new Promise((r) => setTimeout(r, 200));
      }

      // Another duplicate, now of a started event: "duplicate" after one D1 call (the batch
      // that stores or finds the row), nothing created.
      let d1Calls = 0;
      const { batch, prepare } = env.DB;
      env.DB.batch = (...a) => {
        d1Calls += 1;
        return batch.apply(env.DB, a);
      };
      env.DB.prepare = (...a) => {
        const statement = prepare.apply(env.DB, a);
        const counted = (st) =>
          new Proxy(st, {
            get(target, name) {
              const v = Reflect.get(target, name);
              if (typeof v !== "function") return v;
              if (name === "bind") return (...b) => counted(v.apply(target, b));
              if (["first", "all", "run", "raw"].includes(name)) {
                return (...b) => {
                  d1Calls += 1;
                  return v.apply(target, b);
                };
              }
              return v.bind(target);
            },
          });
        return counted(statement);
      };
      try {
        const again = await postLiteapi(d.body);
        expect(again.status).toBe(200);
        expect(await again.json()).toEqual({ status: "duplicate", eventId: d.eventId });
      } finally {
        env.DB.batch = batch;
        env.DB.prepare = prepare;
      }
      expect(d1Calls).toBe(1);
    } finally {
      await instance.dispose();
    }
    const emails = await rows("SELECT dedupe_key FROM emails WHERE booking_id = ? ORDER BY dedupe_key", d.bookingId);
    expect(emails.map((e) => e.dedupe_key)).toEqual([`booking_confirmation:${d.bookingId}`, `owner_new_booking:${d.bookingId}`]);
  });

  it("ten concurrent deliveries of one event: one raw row, one journey, one email per kind", async () => {
    const d = bookingDelivery();
    const introspector = await introspectWorkflow(env.JOURNEY);
    try {
      const responses = await Promise.all(Array.from({ length: 10 }, () => postLiteapi(d.body)));
      const statuses = await Promise.all(responses.map(async (r) => [r.status, (await r.json()).status]));
      expect(statuses.filter(([, s]) => s === "accepted")).toHaveLength(1);
      expect(statuses.filter(([code, s]) => code === 200 && s === "duplicate")).toHaveLength(9);
      const instances = await introspector.get();
      expect(instances).toHaveLength(1);
      await handedOver(d.bookingId);
    } finally {
      await introspector.dispose();
    }
    expect(await rows("SELECT COUNT(*) AS n FROM raw_events WHERE event_id = ?", d.eventId)).toEqual([{ n: 1 }]);
    expect(await rows("SELECT COUNT(*) AS n FROM emails WHERE booking_id = ?", d.bookingId)).toEqual([{ n: 2 }]);
  });

  it("a wrong or missing token gets 401, nothing stored, no journey", async () => {
    const d = bookingDelivery();
    const introspector = await introspectWorkflow(env.JOURNEY);
    try {
      for (const token of ["wrong-token", `${TOKEN}x`, "", null]) {
        const r = await postLiteapi(d.body, { token });
        expect(r.status).toBe(401);
        const body = await r.json();
        expect(body.error).toBe("unauthorized");
        expect(body.message).toMatch(/authorization header/);
      }
      expect(await introspector.get()).toHaveLength(0);
    } finally {
      await introspector.dispose();
    }
    expect(await rows("SELECT COUNT(*) AS n FROM raw_events WHERE event_id = ? OR body LIKE ?", d.eventId, `%${d.eventId}%`)).toEqual([{ n: 0 }]);
  });

  it("malformed bodies get 400 naming the field, and the raw body is kept as rejected", async () => {
    const good = JSON.parse(bookingDelivery().body);
    const marker = unique("malformed_");
    const cases = [
      { body: `{"event_id": "${marker}-1", not json`, field: undefined, message: /not valid JSON/ },
      { body: JSON.stringify({ ...good, event_id: undefined, marker: `${marker}-2` }), field: "event_id" },
      { body: JSON.stringify({ ...good, event_id: `${marker}-3`, event_name: undefined }), field: "event_name" },
      { body: JSON.stringify({ ...good, event_id: `${marker}-4`, request: { holder: {} } }), field: "request" },
      { body: JSON.stringify({ ...good, event_id: `${marker}-5`, response: "{not json" }), field: "response" },
      {
        body: JSON.stringify({ ...good, event_id: `${marker}-6`, response: JSON.stringify({ data: { bookingId: "BKX" } }) }),
        field: "response.data.checkin",
      },
    ];
    for (const c of cases) {
      const r = await postLiteapi(c.body);
      expect(r.status, c.body).toBe(400);
      const body = await r.json();
      expect(body.error).toBe("invalid_payload");
      if (c.field) expect(body.field).toBe(c.field);
      if (c.message) expect(body.message).toMatch(c.message);
    }
    const stored = await rows(
      "SELECT status, event_id, error FROM raw_events WHERE body LIKE ? ORDER BY id",
      `%${marker}%`,
    );
    expect(stored).toHaveLength(cases.length);
    for (const row of stored) {
      expect(row.status).toBe("rejected");
      expect(row.event_id).toBeNull();
      expect(row.error).toBeTruthy();
    }
  });

  it("a valid delivery after a rejected one with the same event id is still processed", async () => {
    const d = bookingDelivery();
    const broken = JSON.parse(d.body);
    broken.response = "{";
    expect((await postLiteapi(JSON.stringify(broken))).status).toBe(400);
    const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(d.eventId));
    try {
      expect((await postLiteapi(d.body)).status).toBe(202);
      await handedOver(d.bookingId); // then asleep until its arrival guide
    } finally {
      await instance.dispose();
    }
  });

  it("an oversized body gets 413 and is not stored", async () => {
    const marker = unique("big_");
    const body = JSON.stringify({ event_id: marker, padding: "x".repeat(70_000) });
    const r = await postLiteapi(body);
    expect(r.status).toBe(413);
    expect((await r.json()).message).toMatch(/limit is 65536 bytes/);
    expect(await rows("SELECT COUNT(*) AS n FROM raw_events WHERE body LIKE ?", `%${marker}%`)).toEqual([{ n: 0 }]);
  });

  it("unknown and not-yet-handled event names are stored and acknowledged, nothing started", async () => {
    const introspector = await introspectWorkflow(env.JOURNEY);
    const ids = [];
    try {
      for (const name of ["booking.somethingNew", "booking.prebook_error"]) {
        const d = bookingDelivery();
        const envelope = JSON.parse(d.body);
        envelope.event_name = name;
        const r = await postLiteapi(JSON.stringify(envelope));
        expect(r.status).toBe(200);
        expect(await r.json()).toMatchObject({ status: "ignored", eventId: d.eventId });
        ids.push(d.eventId);
      }
      expect(await introspector.get()).toHaveLength(0);
    } finally {
      await introspector.dispose();
    }
    for (const id of ids) {
      expect(await rows("SELECT status FROM raw_events WHERE event_id = ?", id)).toEqual([{ status: "ignored" }]);
    }
  });

  it("other methods and paths answer with JSON errors", async () => {
    const { SELF } = await import("cloudflare:test");
    const get = await SELF.fetch("https://engine.test/webhooks/liteapi");
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect(await get.json()).toMatchObject({ error: "method_not_allowed", message: expect.stringContaining("POST") });
    const missing = await SELF.fetch("https://engine.test/nope");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: "not_found" });
  });
});
