// The cost of each thing the engine does, measured inside workerd through the counting Worker of
// bench/cost/entry.mjs (the real build; its D1, outbox, Workflow, email and fetch bindings counted).
// Each scenario runs alone, from counts reset to zero, and prints one `BENCH_COST {json}` line:
// D1 calls, D1 rows read and written (as D1 reports them), subrequests and Workflow steps run.
// bench/cost.mjs runs it (`npm run bench` section "cost per booking").
import { SELF, env, createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import Engine, { countedEnv } from "./cost/entry.mjs";
import { it, expect } from "vitest";
import { futureBooking, liteapiEvent, postLiteapi, runLiteapi, runOutbox, sendThrough } from "../tests/e2e/helpers.mjs";

const ZERO = { d1_calls: 0, rows_read: 0, rows_written: 0, subrequests: 0, steps: 0 };
const FIELDS = Object.keys(ZERO);
const SCHEDULED = ["step: send arrival_guide", "step: send checkin_day", "step: send thank_you"];

async function counts({ reset = false } = {}) {
  const r = await SELF.fetch(`https://engine.test/__bench/counts${reset ? "?reset=1" : ""}`);
  return r.json();
}

function sum(byTag, keep = () => true) {
  const out = { ...ZERO };
  for (const [tag, c] of Object.entries(byTag)) {
    if (!keep(tag)) continue;
    for (const k of FIELDS) out[k] += c[k];
  }
  return out;
}

function add(...parts) {
  const out = { ...ZERO };
  for (const p of parts) for (const k of FIELDS) out[k] += p[k];
  return out;
}

function scale(c, by) {
  return Object.fromEntries(FIELDS.map((k) => [k, Math.round((c[k] / by) * 10) / 10]));
}

/** Counts of what `f` does, alone (with BENCH_COST_TRACE, every round trip printed). */
async function measure(f, label = "") {
  await counts({ reset: true });
  await SELF.fetch("https://engine.test/__bench/trace?reset=1");
  await f();
  if (env.BENCH_COST_TRACE) {
    const trace = await (await SELF.fetch("https://engine.test/__bench/trace?reset=1")).json();
    for (const [tag, sqls] of trace) console.log(`BENCH_TRACE ${label} | ${tag} | ${sqls.join(" ;; ")}`);
  }
  return counts({ reset: true });
}

function report(scenario, c, tags) {
  console.log(`BENCH_COST ${JSON.stringify({ scenario, ...c, tags })}`);
}

it("cost per booking, per scheduled email, per duplicate, per cancellation, per sweeper tick", async () => {
  // Warm-up (first isolate start, migrations checked, config parsed): not counted.
  const warm = futureBooking({ checkinInDays: 40 });
  await runLiteapi(warm);
  await runOutbox();

  // A hotel booking.book and its whole journey (sleeps off): the webhook, every step, and the
  // outbox's work for the confirmation and the owner's alert. The scheduled emails' own steps are
  // counted apart below.
  const d = futureBooking({ checkinInDays: 30, nights: 3 });
  const journey = await measure(() => runLiteapi(d), "book");
  const firstSends = await measure(async () => {
    await runOutbox();
    await sendThrough(`booking_confirmation:${d.bookingId}`);
  }, "first sends");
  const guideSend = await measure(() => sendThrough(`arrival_guide:${d.bookingId}:${d.checkin}`));
  // The outbox sends whatever is first in line, so a window may send more than the email it waits
  // for: its cost per email sent (send_email calls) is what one email costs the outbox.
  const sent = Object.values(firstSends).reduce((n, c) => n + c.emails_sent, 0);
  const sentLater = Object.values(guideSend).reduce((n, c) => n + c.emails_sent, 0);
  expect(sent + sentLater).toBeGreaterThanOrEqual(2);
  const perSend = scale(add(sum(firstSends), sum(guideSend)), sent + sentLater);
  // The owner's alert goes out at once, inside the journey's own window (the outbox's work under
  // the tag "outbox" there); the guest's confirmation waits for its client slot and costs what
  // one client email costs the outbox.
  const book = add(sum(journey, (t) => !SCHEDULED.includes(t)), perSend);
  report("booking.book (hotel, liteAPI): webhook + journey + confirmation and owner alert sent", book, { ...journey, "outbox, per email sent": perSend });

  // A scheduled email: its Workflow step (mean of the three kinds) + the outbox sending it.
  const scheduledSteps = scale(sum(journey, (t) => SCHEDULED.includes(t)), SCHEDULED.length);
  report("scheduled email (arrival guide, check-in note, thank-you): its step + its send", add(scheduledSteps, perSend), { "its step (mean of three)": scheduledSteps, "outbox, per email sent": perSend, emails_sent: sent + sentLater });

  // The same delivery again: the webhook answers from D1's raw event record.
  const duplicate = await measure(async () => {
    const r = await postLiteapi(d.body);
    expect(r.status).toBeLessThan(300);
  }, "duplicate");
  report("duplicate delivery (same event id)", sum(duplicate), duplicate);

  // A cancellation of a live booking: webhook + journey + the guest's and the owner's email sent.
  const c = futureBooking({ checkinInDays: 50 });
  await runLiteapi(c);
  await runOutbox();
  await sendThrough(`booking_confirmation:${c.bookingId}`);
  const cancel = liteapiEvent("booking.cancel", { bookingId: c.bookingId, status: "CANCELLED", cancellation_fee: 0, refund_amount: 540, currency: "EUR" });
  const cancelled = await measure(() => runLiteapi(cancel), "cancel");
  // The owner's alert is sent inside the window (tag "outbox"); the guest's cancellation at the
  // outbox's measured cost per client email.
  report("booking.cancel (hotel): webhook + journey + cancellation and owner alert sent", add(sum(cancelled), perSend), { ...cancelled, "outbox, per email sent": perSend });

  // One sweeper tick with nothing to repair (the every-5-minutes Cron Trigger).
  // The scheduled handler is called as the runtime calls it, over the counted env.
  const tick = await measure(async () => {
    const ctx = createExecutionContext();
    const controller = createScheduledController({ cron: "*/5 * * * *", scheduledTime: new Date() });
    await Engine.prototype.scheduled.call({ env: countedEnv(env, () => "sweeper"), ctx }, controller);
    await waitOnExecutionContext(ctx);
  });
  report("sweeper tick, nothing to repair", sum(tick), tick);

  // The counting wrapper saw the engine's D1 traffic at all (a broken wrapper reads zero).
  expect(book.d1_calls).toBeGreaterThan(0);
  expect(env.DB).toBeDefined();
});
