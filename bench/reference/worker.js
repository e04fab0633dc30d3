// The reference for the webhook benchmark (bench/run.mjs): the seed's minimal pattern, in plain
// JavaScript. Token check, parse JSON, store the raw event in D1 (INSERT … ON CONFLICT DO NOTHING
// on the event id), create a Workflow instance named by the event id (an existing one means a
// duplicate delivery), answer 200. No validation beyond "is JSON with an event_id", no journey.
import { WorkflowEntrypoint } from "cloudflare:workers";

export class ReferenceWorkflow extends WorkflowEntrypoint {
  async run(event, step) {
    return step.do("noop", async () => ({ eventId: event.payload.eventId }));
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/health") return new Response("ok");
    if (request.method !== "POST" || url.pathname !== "/webhooks/liteapi") {
      return new Response("not found", { status: 404 });
    }
    if (request.headers.get("authorization") !== env.LITEAPI_WEBHOOK_TOKEN) {
      return new Response("unauthorized", { status: 401 });
    }
    const text = await request.text();
    let event;
    try {
      event = JSON.parse(text);
    } catch {
      return new Response("invalid json", { status: 400 });
    }
    if (typeof event?.event_id !== "string" || event.event_id === "") {
      return new Response("missing event_id", { status: 400 });
    }
    await env.DB.prepare(
      "INSERT INTO raw_events (event_id, event_name, body, received_at_ms) VALUES (?1, ?2, ?3, ?4) ON CONFLICT(event_id) DO NOTHING",
    )
      .bind(event.event_id, event.event_name ?? null, text, Date.now())
      .run();
    let status = "accepted";
    try {
      await env.JOURNEY.create({ id: `e-${event.event_id}`, params: { eventId: event.event_id } });
    } catch (e) {
      if (!/already.?exists/i.test(String(e?.message ?? e))) throw e;
      status = "duplicate";
    }
    return Response.json({ status, eventId: event.event_id });
  },
};
