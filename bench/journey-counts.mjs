// D1 calls and other subrequests per webhook and per email, counted from the code paths (not
// measured: workerd exposes no per-request counter locally, and the engine's D1 binding cannot be
// wrapped without changing the engine). One D1 call = one `.prepare(…).run()/.first()/.all()` or
// one `batch` (N statements, one round trip). Other subrequests: Durable Object stub fetches,
// Workflow binding calls, outbound fetch, send_email, SMTP sockets. (On Cloudflare, D1 calls count
// towards the per-invocation subrequest limit as well.)
//
// Every D1 call, stub fetch and Workflow call is awaited, so AWAITS (the number of `.await` in each
// function the counts were read from, at commit COUNTED_AT) is a fingerprint of these paths:
// bench/run.mjs recomputes it with `awaitsNow()` and flags the table when a function changed, so a
// stale table never goes unnoticed (other changes in the same files do not trip it).
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";

// Recounted at f7edf72 after the reshaping of issue #10 (functions moved to their new files; the
// D1 calls and subrequests per path are unchanged: webhooks `liteapi` → `receive`, the outbox's
// `hand_over` split into `hand_over` → `call_provider` → `apply`, `deliver` into the outbox client).
// Recounted at the outbound webhooks (issue #15): `ingest` now starts the journey through
// `workflow::start_for_event` (create + mark, the same 2 D1 calls and 1 Workflow create),
// `deliver` reads the claimed row only on a duplicate claim (off the first-send path), the outbox
// `fetch` routes gained off-path awaits, and `booked` publishes `booking.confirmed` in a step.
export const COUNTED_AT = "issue-15";

export const FUNCTIONS = {
  "src/routes/webhooks.rs": ["read_limited", "receive", "ingest", "reject"],
  "src/store/raw_events.rs": ["insert", "find", "mark"],
  "src/store/bookings.rs": ["insert_hotel_booking", "get", "update_facts", "mark_replaced"],
  "src/store/emails.rs": ["claim", "mark_queued", "record_outcome"],
  "src/store/schedule.rs": ["plan", "decide", "cached_location", "cache_location"],
  "src/outbox/client.rs": ["deliver", "enqueue"],
  "src/journey/failures.rs": ["deliver_once"],
  "src/journey/hotel.rs": ["booked", "record", "run_plan", "make_plan", "scheduled_send"],
  "src/journey/hotel_zone.rs": ["plan_zone", "hotel_location"],
  "src/suppliers/liteapi.rs": ["hotel_location"],
  "src/suppliers/mod.rs": ["get"],
  "src/store/hotel_zones.rs": ["stored", "record"],
  "src/journey/workflow.rs": ["create"],
  "src/outbox/mod.rs": ["fetch", "alarm"],
  "src/outbox/scheduler.rs": ["rearm", "process"],
  "src/outbox/gate.rs": ["gate"],
  "src/outbox/send.rs": ["attempt", "hand_over", "call_provider", "apply"],
  "src/outbox/sync.rs": ["learn_suppression", "sync_records"],
  "src/outbox/providers.rs": ["send_cloudflare"],
  "src/outbox/resend.rs": ["send"],
  "src/store/suppressions.rs": ["get", "record"],
};

/** The body of the first `fn name` in `source` (brace-matched), or null. */
function functionBody(source, name) {
  const m = new RegExp(`\\bfn ${name}\\s*[<(]`).exec(source);
  if (!m) return null;
  const open = source.indexOf("{", m.index);
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    if (source[i] === "{") depth++;
    else if (source[i] === "}" && --depth === 0) return source.slice(open, i + 1);
  }
  return null;
}

/** `{"file#fn": awaits}` for the code as it is now under `root` (-1: function not found). */
export function awaitsNow(root) {
  const out = {};
  for (const [file, names] of Object.entries(FUNCTIONS)) {
    const path = join(root, file);
    const source = existsSync(path) ? readFileSync(path, "utf8") : "";
    for (const name of names) {
      const body = functionBody(source, name);
      out[`${file}#${name}`] = body === null ? -1 : (body.match(/\.await/g) ?? []).length;
    }
  }
  return out;
}

export const AWAITS = {
  "src/routes/webhooks.rs#read_limited": 1,
  "src/routes/webhooks.rs#receive": 2,
  "src/routes/webhooks.rs#ingest": 4,
  "src/routes/webhooks.rs#reject": 1,
  "src/store/raw_events.rs#insert": 1,
  "src/store/raw_events.rs#find": 1,
  "src/store/raw_events.rs#mark": 1,
  "src/store/bookings.rs#insert_hotel_booking": 1,
  "src/store/bookings.rs#get": 1,
  "src/store/bookings.rs#update_facts": 1,
  "src/store/bookings.rs#mark_replaced": 1,
  "src/store/emails.rs#claim": 1,
  "src/store/emails.rs#mark_queued": 1,
  "src/store/emails.rs#record_outcome": 1,
  "src/store/schedule.rs#plan": 1,
  "src/store/schedule.rs#decide": 1,
  "src/store/schedule.rs#cached_location": 1,
  "src/store/schedule.rs#cache_location": 1,
  "src/outbox/client.rs#deliver": 4,
  "src/outbox/client.rs#enqueue": 2,
  "src/journey/failures.rs#deliver_once": 3,
  "src/journey/hotel.rs#booked": 6,
  "src/journey/hotel.rs#record": 4,
  "src/journey/hotel.rs#run_plan": 6,
  "src/journey/hotel.rs#make_plan": 3,
  "src/journey/hotel.rs#scheduled_send": 4,
  "src/journey/hotel_zone.rs#plan_zone": 3,
  "src/journey/hotel_zone.rs#hotel_location": 3,
  "src/suppliers/liteapi.rs#hotel_location": 1,
  "src/suppliers/mod.rs#get": 2,
  "src/store/hotel_zones.rs#stored": 1,
  "src/store/hotel_zones.rs#record": 1,
  "src/journey/workflow.rs#create": 1,
  "src/outbox/mod.rs#fetch": 13, // the routes /withdraw, /release, /rearm add awaits off the counted paths
  "src/outbox/mod.rs#alarm": 2,
  "src/outbox/scheduler.rs#rearm": 1,
  "src/outbox/scheduler.rs#process": 4,
  "src/outbox/gate.rs#gate": 2,
  "src/outbox/send.rs#attempt": 3,
  "src/outbox/send.rs#hand_over": 1,
  "src/outbox/send.rs#call_provider": 3,
  "src/outbox/send.rs#apply": 1,
  "src/outbox/sync.rs#learn_suppression": 1,
  "src/outbox/sync.rs#sync_records": 1,
  "src/outbox/providers.rs#send_cloudflare": 1,
  "src/outbox/resend.rs#send": 2,
  "src/store/suppressions.rs#get": 1,
  "src/store/suppressions.rs#record": 3,
};

/** Rows: [what, D1 calls, other subrequests, where]. */
export const WEBHOOK_ROWS = [
  [
    "ours: POST /webhooks/liteapi, new event (202)",
    "2",
    "1 Workflow create",
    "webhooks.rs `ingest`: `raw_events::insert` (run) → `workflow::create` (JOURNEY.create) → `raw_events::mark` (run, status started)",
  ],
  [
    "ours: same event again (200 duplicate)",
    "2",
    "0",
    "`raw_events::insert` (run, 0 changes) → `raw_events::find` (first, status started) → answer",
  ],
  [
    "ours: malformed body (400)",
    "1",
    "0",
    "`reject` → `raw_events::insert` (status rejected)",
  ],
  ["reference: new event", "1", "1 Workflow create", "bench/reference/worker.js: INSERT … ON CONFLICT DO NOTHING, JOURNEY.create"],
  ["reference: same event again", "1", "1 Workflow create (throws already exists)", "same code path; the create call is the dedupe"],
  ["floor", "0", "0", "bench/floor/worker.js"],
];

export const JOURNEY_ROWS = [
  [
    "step `record booking <id>`",
    "2 (3 statements)",
    "0",
    "hotel.rs `record`: `bookings::get`, `insert_hotel_booking` (batch of 2: contact + booking with its snapshot hash); a redelivery with new facts: `get` + `write_facts`; +1 `mark_replaced` on a rebook",
  ],
  [
    "step `email booking_confirmation:<id>`",
    "2",
    "1 DO fetch",
    "outbox/client.rs `deliver`: `emails::claim`, outbox `POST /enqueue` (stub fetch), `emails::mark_queued`",
  ],
  ["step `email owner_new_booking:<id>`", "2", "1 DO fetch", "same as above"],
  [
    "step `plan <id> v1`",
    "3 (2 when the booking carries its location; 6 on a hotel's first plan)",
    "0 (1 fetch on a hotel's first plan with LITEAPI_API_KEY set)",
    "hotel.rs `make_plan` + `plan_zone`: `bookings::get`, `hotel_zones::stored` (the hotel's zone, resolved once), `schedule::plan` (one batch of one INSERT per kind); first plan of a hotel: + `schedule::cached_location`, liteAPI `GET /data/hotel` (suppliers/liteapi.rs), `cache_location`, `hotel_zones::record`",
  ],
  [
    "step `webhooks evt_…` (booking.confirmed)",
    "1 with no subscriber for the type; 2 with k subscribers",
    "0; with k subscribers ⌈k/100⌉ queue sends (+ per delivery: 3 D1 + 1 fetch in the queue consumer)",
    "journey/mod.rs `publish` → publisher `publish`: `webhooks::enabled_subscribers`, then one batch (event + k deliveries + claim) and `sendBatch`",
  ],
  [
    "outbox alarm, per email sent",
    "3 for a booking-bound client email, 2 for other client email, 1 for an owner alert; +1 per client email for `email.sent` (+1 more with subscribers)",
    "1 send_email or 1 Resend fetch (2 hand-overs on a failover: + 1 SMTP socket); with subscribers + queue sends",
    "outbox/gate.rs `gate`: a booking-bound email re-reads its booking (`bookings::get`, outbox/intent.rs: cancelled / superseded / stale → skipped), a client email reads `suppressions::get` at its turn (marketing caps are SQLite counts), `attempt` (SQLite only), then `sync_records` (outbox/sync.rs) → `emails::record_outcome`",
  ],
  [
    "**booking.book, end to end** (webhook + journey + 2 immediate emails), no webhook subscriber",
    "**17**",
    "**5** (1 Workflow create, 2 DO fetches, 2 send_email)",
    "2 + 2 + 2 + 2 + 1 (booking.confirmed: subscribers read) + 3 + 3 (client email, booking re-read at its turn) + 1 (email.sent: subscribers read) + 1 (owner alert); Workflow step state is the engine's own storage, not ours",
  ],
  [
    "**per scheduled email** (arrival guide, check-in day, thank-you)",
    "**7**",
    "**2** (1 DO fetch, 1 send_email)",
    "hotel.rs `scheduled_send`: `bookings::get`, `claim`, enqueue, `mark_queued`, `schedule::decide`; then the outbox's booking re-read, `suppressions::get` and `record_outcome`. Skipped (cancelled/superseded): 2 D1 (`get`, `decide`)",
  ],
];
