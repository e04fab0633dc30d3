// The cost of each thing the engine does, measured inside workerd through the counting Worker of
// bench/cost/entry.mjs (the real build; its D1, outbox, Workflow, email, queue and fetch bindings
// counted). Each scenario runs alone, from counts reset to zero, and prints one `BENCH_COST {json}`
// line: D1 calls, D1 rows read and written (as D1 reports them), subrequests, Workflow steps run,
// and the workerd processes' CPU ms (median of BENCH_COST_REPEATS repetitions; read from outside
// workerd by bench/cost/cpu-probe.mjs, as the clock inside does not advance while code runs). A
// last `BENCH_COST_SIZE {json}` line: D1's growth over BENCH_COST_SIZE_BOOKINGS complete hotel
// journeys (every email sent, its content kept), scaled to 1,000 bookings. Last, what one outbound
// webhook subscriber adds to a booking (its publish and its delivery), as one more `BENCH_COST` line.
// bench/cost.mjs runs it (`npm run bench` section "cost per booking").
import { SELF, env, createExecutionContext, createScheduledController, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import Engine, { countedEnv } from "./cost/entry.mjs";
import { it, expect } from "vitest";
import { futureBooking, liteapiEvent, outboxStub, passClientGap, postLiteapi, runLiteapi, runOutbox, sendThrough } from "../tests/e2e/helpers.mjs";
import { bookErrorBody, checkout, compensationOf, paidSession, runLiteapiEvent, runStripeEvent } from "../tests/e2e/compensation-helpers.mjs";

const ZERO = { d1_calls: 0, rows_read: 0, rows_written: 0, subrequests: 0, steps: 0, emails_sent: 0, d1_calls_rows_unreported: 0 };
const FIELDS = Object.keys(ZERO);
const SCHEDULED = ["step: send arrival_guide", "step: send checkin_day", "step: send thank_you"];
const REPEATS = Math.max(1, Number(env.BENCH_COST_REPEATS ?? 9));
const SIZE_BOOKINGS = Math.max(1, Number(env.BENCH_COST_SIZE_BOOKINGS ?? 50));

async function counts({ reset = false } = {}) {
  const r = await SELF.fetch(`https://engine.test/__bench/counts${reset ? "?reset=1" : ""}`);
  return r.json();
}

/** CPU ms the workerd processes of this run have used so far (bench/cost/cpu-probe.mjs). */
async function cpuMs() {
  const r = await fetch(env.CPU_PROBE);
  if (!r.ok) throw new Error(`CPU probe answered ${r.status}: ${await r.text()}`);
  return (await r.json()).ms;
}

function sum(byTag, keep = () => true) {
  const out = { ...ZERO };
  for (const [tag, c] of Object.entries(byTag)) {
    if (!keep(tag)) continue;
    for (const k of FIELDS) out[k] += c[k] ?? 0;
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

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Counts of what `f` does, alone, and the workerd CPU ms it took (with BENCH_COST_TRACE, every
 * round trip printed). The CPU probe is read outside the counted window (its fetch would count).
 */
async function measure(f, label = "") {
  const cpu0 = await cpuMs();
  await counts({ reset: true });
  await SELF.fetch("https://engine.test/__bench/trace?reset=1");
  await f();
  if (env.BENCH_COST_TRACE) {
    const trace = await (await SELF.fetch("https://engine.test/__bench/trace?reset=1")).json();
    for (const [tag, sqls, rows] of trace) console.log(`BENCH_TRACE ${label} | ${tag} | ${sqls.map((q, i) => `${q} [${rows[i] ?? "?"} rows read]`).join(" ;; ")}`);
  }
  const byTag = await counts({ reset: true });
  return { byTag, cpu: (await cpuMs()) - cpu0 };
}

/**
 * A hotel booking.book delivery (tests/e2e/helpers.mjs `futureBooking`) with its own checkout id,
 * client reference, payment transaction and guest address: the fixture's are the same for every
 * booking, so lookups by them would read one more row per earlier booking of the benchmark, which
 * no real booking does.
 */
function ownBooking(options) {
  const d = futureBooking(options);
  const n = d.bookingId.replace(/^BK_/, "");
  const body = d.body
    .replaceAll("PB_fake_9xYz", `PB_${n}`)
    .replaceAll("trip_fake_0001", `trip_${n}`)
    .replaceAll("tr_fake_0001", `tr_${n}`)
    .replaceAll("guest@example.com", `guest-${n}@example.com`);
  return { ...d, body };
}

const emailsSent = (byTag) => Object.values(byTag).reduce((n, c) => n + c.emails_sent, 0);

/**
 * Passes client slots until no client email is queued or sending (at most `max` slots), then
 * closes the slot a slot left open (a pass that found nothing to send), so the next client email
 * waits for the benchmark instead of going out inside another scenario's window.
 */
async function drainClientEmails(max = 40) {
  for (let i = 0; i < max; i++) {
    const state = await passClientGap();
    if (!state.items.some((x) => x.audience === "client" && ["queued", "sending"].includes(x.status))) {
      await runInDurableObject(outboxStub(), async (_instance, st) => {
        st.storage.sql.exec("UPDATE state SET value = ? WHERE key = 'next_slot_at_ms'", Date.now() + 86_400_000);
      });
      return;
    }
  }
  throw new Error(`client emails still queued after ${max} slots`);
}

/**
 * Posts a liteAPI booking and waits until its journey sleeps before its first scheduled email
 * (sleeps left on), then until the outbox has sent the owner's alert: the booking's own work.
 */
async function bookUntilFirstSleep(delivery) {
  const sleeps = async () => (await (await SELF.fetch("https://engine.test/__bench/sleeps")).json()).sleeps;
  const before = await sleeps();
  const r = await postLiteapi(delivery.body);
  expect(r.status, await r.clone().text()).toBe(202);
  const until = Date.now() + 60_000;
  while ((await sleeps()) === before) {
    if (Date.now() > until) throw new Error(`the journey of ${delivery.eventId} did not reach its first sleep in 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await runOutbox();
}

function report(scenario, c, cpu, tags) {
  const { emails_sent, d1_calls_rows_unreported, ...shown } = c;
  console.log(`BENCH_COST ${JSON.stringify({ scenario, ...shown, d1_calls_rows_unreported, cpu_ms: cpu.median, cpu_ms_runs: cpu.runs, tags })}`);
}

const cpuOf = (runs) => ({ median: Math.round(median(runs)), runs: runs.map(Math.round) });

it("cost per booking, per scheduled email, per duplicate, per cancellation, per compensation, per sweeper tick", async () => {
  // Warm-up (first isolate start, migrations checked, config parsed): not counted.
  const warm = ownBooking({ checkinInDays: 40 });
  await runLiteapi(warm);
  await runOutbox();
  await drainClientEmails();
  const warmPay = checkout();
  await runStripeEvent(paidSession(warmPay));
  await runLiteapiEvent(bookErrorBody(warmPay));
  await runOutbox();
  await drainClientEmails();

  // Per repetition: booking A runs until its journey sleeps before the first scheduled email (the
  // booking's own work: webhook, steps, the owner's alert sent); booking B runs its whole journey
  // with sleeps off (the three scheduled emails' steps included); then every client email waiting
  // (A's and B's confirmations, B's three scheduled emails) is sent, which gives the outbox's cost
  // per email sent. Counts are the first repetition's; CPU is the median over the repetitions.
  const runs = { book: [], full: [], perSend: [], duplicate: [], cancel: [], compensation: [], payment: [], tick: [] };
  let first = null;
  for (let rep = 0; rep < REPEATS; rep++) {
    console.log(`BENCH_PROGRESS repetition ${rep + 1} of ${REPEATS}`);
    const a = ownBooking({ checkinInDays: 30, nights: 3 });
    const book = await measure(() => bookUntilFirstSleep(a), "book");
    const b = ownBooking({ checkinInDays: 30, nights: 3 });
    const full = await measure(async () => {
      await runLiteapi(b);
      await runOutbox();
    }, "book, sleeps off");
    const sends = await measure(drainClientEmails, "client sends");
    const sent = emailsSent(sends.byTag);
    // A's and B's confirmations, B's three scheduled emails; a stray earlier one would add to it.
    expect(sent).toBeGreaterThanOrEqual(5);
    expect(emailsSent(book.byTag), "the owner's alert, inside the booking's window").toBe(1);
    runs.book.push(book.cpu);
    runs.full.push(full.cpu);
    runs.perSend.push(sends.cpu / sent);

    // The same delivery again, ten times: the webhook answers from D1's raw event record.
    const dup = await measure(async () => {
      for (let i = 0; i < 10; i++) {
        const r = await postLiteapi(b.body);
        expect(r.status).toBeLessThan(300);
      }
    }, "duplicate");
    runs.duplicate.push(dup.cpu / 10);

    // A cancellation of a live booking whose confirmation went out: webhook + journey + the
    // owner's alert sent inside the window; the guest's notice at the outbox's cost per email.
    const c = ownBooking({ checkinInDays: 50 });
    await runLiteapi(c);
    await runOutbox();
    await sendThrough(`booking_confirmation:${c.bookingId}`);
    await drainClientEmails();
    const cancelEvent = liteapiEvent("booking.cancel", { bookingId: c.bookingId, status: "CANCELLED", cancellation_fee: 0, refund_amount: 540, currency: "EUR" });
    const cancel = await measure(async () => {
      await runLiteapi(cancelEvent);
      await runOutbox();
    }, "cancel");
    runs.cancel.push(cancel.cpu);

    // Compensation: a Stripe payment (measured apart: every paid booking has one), then liteAPI's
    // failure of that checkout: the failure's webhook and journey, the compensation opened, the
    // owner's alert sent inside the window; the guest's notice at the outbox's cost per email.
    const p = checkout();
    const payment = await measure(() => runStripeEvent(paidSession(p)), "payment");
    const comp = await measure(async () => {
      const out = await runLiteapiEvent(bookErrorBody(p));
      expect(out.failed).toEqual([]);
      await runOutbox();
    }, "compensation");
    const opened = await compensationOf(p);
    expect(opened?.state, "the compensation was opened").toBeTruthy();
    expect(emailsSent(comp.byTag), "the owner's compensation alert, inside the window").toBe(1);
    const notice = await measure(() => sendThrough(`booking_not_confirmed:${opened.compensation_id}`), "compensation notice");
    runs.compensation.push(comp.cpu);
    runs.payment.push(payment.cpu);
    runs.perSend.push(notice.cpu / Math.max(1, emailsSent(notice.byTag)));
    await drainClientEmails();

    // One sweeper tick with nothing to repair (the every-5-minutes Cron Trigger), called as the
    // runtime calls the scheduled handler, over the counted env.
    const tick = await measure(async () => {
      const ctx = createExecutionContext();
      const controller = createScheduledController({ cron: "*/5 * * * *", scheduledTime: new Date() });
      await Engine.prototype.scheduled.call({ env: countedEnv(env, () => "sweeper"), ctx }, controller);
      await waitOnExecutionContext(ctx);
    });
    runs.tick.push(tick.cpu);

    if (rep === 0) first = { book, full, sends, sent, dup, cancel, comp, notice, payment, tick };
  }

  const { book, full, sends, sent, dup, cancel, comp, notice, payment, tick } = first;
  const perSend = scale(add(sum(sends.byTag), sum(notice.byTag)), sent + emailsSent(notice.byTag));
  const perSendCpu = cpuOf(runs.perSend);

  // booking.book: the booking's window plus the guest's confirmation at the cost per email sent.
  const bookCounts = add(sum(book.byTag), perSend);
  report(
    "booking.book (hotel, liteAPI): webhook + journey + confirmation and owner alert sent",
    bookCounts,
    cpuOf(runs.book.map((c) => c + perSendCpu.median)),
    { ...book.byTag, "outbox, per email sent": perSend },
  );

  // A scheduled email: its Workflow step (mean of the three kinds, from B's whole journey) + the
  // outbox sending it. Its CPU: B's whole journey minus A's journey up to its first sleep, over
  // three, plus the CPU per email sent.
  const scheduledSteps = scale(sum(full.byTag, (t) => SCHEDULED.includes(t)), SCHEDULED.length);
  const scheduledCpu = runs.full.map((f, i) => (f - runs.book[i]) / SCHEDULED.length + perSendCpu.median);
  report(
    "scheduled email (arrival guide, check-in note, thank-you): its step + its send",
    add(scheduledSteps, perSend),
    cpuOf(scheduledCpu),
    { "its step (mean of three)": scheduledSteps, "outbox, per email sent": perSend, emails_sent: sent },
  );

  report("duplicate delivery (same event id)", scale(sum(dup.byTag), 10), cpuOf(runs.duplicate), scale(sum(dup.byTag), 10));

  report(
    "booking.cancel (hotel): webhook + journey + cancellation and owner alert sent",
    add(sum(cancel.byTag), perSend),
    cpuOf(runs.cancel.map((c) => c + perSendCpu.median)),
    { ...cancel.byTag, "outbox, per email sent": perSend },
  );

  report(
    "compensation (paid hotel booking liteAPI failed): failure webhook + journey + guest notice and owner alert sent",
    add(sum(comp.byTag), perSend),
    cpuOf(runs.compensation.map((c) => c + perSendCpu.median)),
    { ...comp.byTag, "outbox, per email sent": perSend, "the Stripe payment before it (not included)": { ...sum(payment.byTag), cpu_ms: Math.round(median(runs.payment)) } },
  );

  report("sweeper tick, nothing to repair", sum(tick.byTag), cpuOf(runs.tick), tick.byTag);

  // The counting wrapper saw the engine's D1 traffic at all (a broken wrapper reads zero), and the
  // probe saw the booking use CPU.
  expect(bookCounts.d1_calls).toBeGreaterThan(0);
  expect(median(runs.book)).toBeGreaterThan(0);

  // D1 size per 1,000 bookings: SIZE_BOOKINGS complete hotel journeys (sleeps off, so the arrival
  // guide, check-in note and thank-you are each sent), every email sent and its content kept in
  // email_contents (kept 180 days by default). Size as D1 reports it after a statement
  // (`meta.size_after`: the database file, bytes) and the content's own bytes.
  const dbSize = async () => (await env.DB.prepare("SELECT 1").run()).meta.size_after;
  const contentBytes = async () =>
    (await env.DB.prepare("SELECT COALESCE(SUM(length(dedupe_key) + length(subject) + length(text_body) + length(html_body) + length(headers_json)), 0) AS n, COUNT(*) AS k FROM email_contents").first());
  // Stored bytes per table: the sum of length() of every column of every row (values as SQLite
  // measures them: text and blob bytes, a number's text form), without indexes or page overhead —
  // where the file's growth comes from. (SQLite's dbstat, which would give pages, is not offered.)
  const tableNames = (
    await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations' ORDER BY name").all()
  ).results.map((r) => r.name);
  const byTable = async () => {
    const out = {};
    for (const table of tableNames) {
      const columns = (await env.DB.prepare(`PRAGMA table_info("${table}")`).all()).results.map((c) => c.name);
      const bytes = columns.map((c) => `COALESCE(length("${c}"), 0)`).join(" + ");
      out[table] = (await env.DB.prepare(`SELECT COALESCE(SUM(${bytes}), 0) AS n FROM "${table}"`).first()).n;
    }
    return out;
  };
  await drainClientEmails();
  console.log(`BENCH_PROGRESS D1 size over ${SIZE_BOOKINGS} bookings`);
  const size0 = await dbSize();
  const content0 = await contentBytes();
  const tables0 = await byTable();
  for (let i = 0; i < SIZE_BOOKINGS; i++) {
    const d = ownBooking({ checkinInDays: 30 + i, nights: 3 });
    await runLiteapi(d);
    await runOutbox();
    await drainClientEmails();
  }
  const size1 = await dbSize();
  const content1 = await contentBytes();
  const tables1 = await byTable();
  expect(typeof size0, "D1 reports meta.size_after").toBe("number");
  const emails = content1.k - content0.k;
  expect(emails, "confirmation, owner alert and three scheduled emails per booking, contents kept").toBe(5 * SIZE_BOOKINGS);
  const per1000 = (x) => Math.round((x * 1000) / SIZE_BOOKINGS);
  console.log(
    `BENCH_COST_SIZE ${JSON.stringify({
      bookings: SIZE_BOOKINGS,
      emails_per_booking: emails / SIZE_BOOKINGS,
      db_bytes_before: size0,
      db_bytes_after: size1,
      db_bytes_per_1000: per1000(size1 - size0),
      email_content_bytes_per_1000: per1000(content1.n - content0.n),
      // Stored bytes per 1,000 bookings of each table that grew, largest first.
      table_bytes_per_1000: Object.fromEntries(
        Object.entries(tables1)
          .map(([name, bytes]) => [name, per1000(bytes - (tables0[name] ?? 0))])
          .filter(([, bytes]) => bytes > 0)
          .sort((x, y) => y[1] - x[1]),
      ),
    })}`,
  );

  // Outbound webhooks, last (a subscriber changes every later booking): one subscriber to
  // booking.confirmed at the local receiver. Per repetition a booking runs up to its first sleep,
  // as booking A above, and the window lasts until D1 records its webhook delivered (the queue
  // consumer's attempt, the receiver's verified answer). What this adds to booking.book is the
  // window minus booking A's (counts: first repetitions; CPU: the medians' difference).
  console.log("BENCH_PROGRESS outbound webhooks");
  const name = `cost-${Date.now().toString(36)}`;
  const created = await SELF.fetch("https://engine.test/admin/webhooks/subscribers", {
    method: "POST",
    headers: { authorization: "Bearer test-operator-token-0123456789abcdef", "content-type": "application/json" },
    body: JSON.stringify({ url: `${env.WEBHOOK_RECEIVER}/hook/${name}`, eventTypes: ["booking.confirmed"], description: "cost benchmark" }),
  });
  const sub = await created.json();
  expect(created.status, JSON.stringify(sub)).toBe(201);
  await fetch(`${env.WEBHOOK_RECEIVER}/__register`, { method: "POST", body: JSON.stringify({ name, secret: sub.secret }) });
  const delivered = async () =>
    (await env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE subscriber_id = ? AND status = 'delivered'").bind(sub.subscriberId).first()).n;
  const hookRuns = [];
  let hookFirst = null;
  for (let rep = 0; rep < REPEATS; rep++) {
    const w = ownBooking({ checkinInDays: 30, nights: 3 });
    const m = await measure(async () => {
      await bookUntilFirstSleep(w);
      const until = Date.now() + 60_000;
      while ((await delivered()) < rep + 1) {
        if (Date.now() > until) throw new Error(`the webhook of ${w.bookingId} was not delivered in 60 s`);
        // Polled slowly: each look is a D1 query whose CPU lands in this window (the local queue
        // hands its batch to the consumer after about a second anyway).
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }, "booking with a webhook subscriber");
    hookRuns.push(m.cpu);
    hookFirst ??= m;
    await drainClientEmails();
  }
  const got = await (await fetch(`${env.WEBHOOK_RECEIVER}/__deliveries?name=${name}`)).json();
  expect(got.filter((x) => x.type === "booking.confirmed" && x.verified)).toHaveLength(REPEATS);
  const withHook = sum(hookFirst.byTag);
  const added = Object.fromEntries(FIELDS.map((k) => [k, withHook[k] - sum(book.byTag)[k]]));
  report(
    "outbound webhook, one subscriber to booking.confirmed: publish + one delivery, added to booking.book",
    added,
    { median: Math.round(median(hookRuns) - median(runs.book)), runs: hookRuns.map((c, i) => Math.round(c - (runs.book[i] ?? median(runs.book)))) },
    { "booking.book window with the subscriber": hookFirst.byTag, "booking.book window without": book.byTag },
  );
});

it("the counting wrapper counts raw(), exec(), a session's statements and queue sends", async () => {
  await counts({ reset: true });
  const sent = [];
  const queue = { send: async (m) => sent.push(m), sendBatch: async (ms) => sent.push(...ms) };
  const counted = countedEnv({ DB: env.DB, WEBHOOKS: queue, WEBHOOKS_DLQ: queue }, () => "self-check");

  // raw(): one call, its rows as arrays in column order, the rows D1 read reported.
  const rawRows = await counted.DB.prepare("SELECT name, type FROM sqlite_master WHERE type = 'table' ORDER BY name LIMIT 2").raw({ columnNames: true });
  expect(rawRows[0]).toEqual(["name", "type"]);
  expect(rawRows.slice(1).every((r) => Array.isArray(r) && r[1] === "table")).toBe(true);
  await expect(counted.DB.prepare("SELECT 1").raw()).rejects.toThrow(/named like an integer/);
  // exec(): one call, flagged as one whose rows D1 does not report.
  await counted.DB.exec("SELECT 1");
  // A session's statements and batches count as the database's.
  const session = counted.DB.withSession("first-unconstrained");
  await session.prepare("SELECT 1 AS one").first();
  await session.batch([session.prepare("SELECT 1 AS one"), session.prepare("SELECT 2 AS two")]);
  // Queue send and sendBatch: one subrequest each, the messages passed through.
  await counted.WEBHOOKS.send({ a: 1 });
  await counted.WEBHOOKS_DLQ.sendBatch([{ body: 2 }, { body: 3 }]);
  expect(sent).toEqual([{ a: 1 }, { body: 2 }, { body: 3 }]);

  const c = (await counts({ reset: true }))["self-check"];
  expect(c.d1_calls).toBe(5); // raw ×2, exec, session first, session batch
  expect(c.d1_calls_rows_unreported).toBe(1);
  expect(c.rows_read).toBeGreaterThan(0);
  expect(c.subrequests).toBe(2);
});
