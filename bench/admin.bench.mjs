// Admin costs inside workerd (run by bench/admin.mjs): the sign-in's password hash (PBKDF2-SHA-256,
// 100,000 iterations, in the Worker's wasm) against the sign-in form, which hashes nothing; and a
// booking's timeline page with 10 and with 200 events of each kind against the overview.
// One line per scenario: `BENCH_ADMIN {json}`. Times are wall ms measured around SELF.fetch; inside
// local workerd a request that does no I/O spends its wall time on the CPU.
import { env, SELF } from "cloudflare:test";
import { it } from "vitest";

const BASE = "https://engine.test";
const RUNS = Number(env.BENCH_ADMIN_RUNS ?? 20);

function stats(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { runs: s.length, p50_ms: +q(0.5).toFixed(1), p90_ms: +q(0.9).toFixed(1), min_ms: +s[0].toFixed(1) };
}

async function timed(n, fn) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = await fn(i);
    ms.push(performance.now() - t);
    await r.arrayBuffer();
  }
  return stats(ms);
}

function signIn(password, i) {
  return SELF.fetch(`${BASE}/admin/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": `192.0.2.${i % 250}` },
    body: new URLSearchParams({ account: "bench", password, next: "/admin" }),
  });
}

async function seed(bookingId, n) {
  const now = Date.now();
  const email = `${bookingId.toLowerCase()}@example.com`;
  const stmts = [
    env.DB.prepare("INSERT OR IGNORE INTO contacts (email, first_name, last_name, created_at_ms, updated_at_ms) VALUES (?1, 'Bench', 'Guest', ?2, ?2)").bind(email, now),
    env.DB.prepare(
      "INSERT INTO bookings (booking_id, source, kind, contact_email, status, hotel_name, checkin, checkout, details_json, created_at_ms, updated_at_ms) VALUES (?1, 'liteapi', 'hotel', ?2, 'confirmed', 'Bench Hotel', '2027-01-10', '2027-01-13', '{}', ?3, ?3)",
    ).bind(bookingId, email, now),
  ];
  for (let i = 0; i < n; i++) {
    const body = JSON.stringify({ event_id: `evt_${bookingId}_${i}`, event_name: "booking.checkinInstruction", data: { bookingId, text: "x".repeat(400) } });
    stmts.push(env.DB.prepare("INSERT INTO raw_events (source, event_id, event_name, status, headers_json, body, received_at_ms, booking_id) VALUES ('liteapi', ?1, 'booking.checkinInstruction', 'started', '{}', ?2, ?3, ?4)").bind(`evt_${bookingId}_${i}`, body, now + i, bookingId));
    stmts.push(env.DB.prepare("INSERT INTO emails (dedupe_key, kind, audience, booking_id, to_addr, subject, rank, status, message_id, attempts, created_at_ms, updated_at_ms) VALUES (?1, 'booking_updated', 'client', ?2, ?3, 'Your booking was updated', 1, 'sent', ?4, 1, ?5, ?5)").bind(`booking_updated:${bookingId}:${i}`, bookingId, email, `<${i}.${bookingId}@example.com>`, now + i));
    stmts.push(env.DB.prepare("INSERT INTO scheduled_sends (booking_id, kind, journey_version, due_at_ms, status, zone, planned_at_ms) VALUES (?1, ?2, ?3, ?4, 'planned', 'Europe/Madrid', ?4)").bind(bookingId, "arrival_guide", i + 1, now + i));
  }
  for (let i = 0; i < stmts.length; i += 300) await env.DB.batch(stmts.slice(i, i + 300));
}

it("admin costs", async () => {
  // Sign in once for the page timings.
  const first = await signIn("bench-admin-password", 0);
  if (first.status !== 303) throw new Error(`sign-in answered ${first.status}`);
  const cookie = first.headers.get("set-cookie").split(";")[0];

  const form = await timed(RUNS, () => SELF.fetch(`${BASE}/admin/login`));
  const wrong = await timed(RUNS, (i) => signIn("not-the-password", i));
  const right = await timed(RUNS, (i) => signIn("bench-admin-password", i));
  console.log(`BENCH_ADMIN ${JSON.stringify({ scenario: "GET /admin/login (no hash)", ...form })}`);
  console.log(`BENCH_ADMIN ${JSON.stringify({ scenario: "POST /admin/login, wrong password (1 PBKDF2, 1 D1 statement)", ...wrong })}`);
  console.log(`BENCH_ADMIN ${JSON.stringify({ scenario: "POST /admin/login, right password (1 PBKDF2, 2 D1 calls)", ...right })}`);
  console.log(`BENCH_ADMIN ${JSON.stringify({ scenario: "PBKDF2-SHA-256 ×100,000 (wrong password minus the form)", runs: RUNS, p50_ms: +(wrong.p50_ms - form.p50_ms).toFixed(1) })}`);

  await seed("BK_BENCH_10", 10);
  await seed("BK_BENCH_200", 200);
  const get = (path) => () => SELF.fetch(`${BASE}${path}`, { headers: { cookie } });
  for (const [label, path] of [
    ["GET /admin/booking, 10 of each kind (≈31 entries)", "/admin/booking?id=BK_BENCH_10"],
    ["GET /admin/booking, 200 of each kind (441 entries: the oldest 40 raw events)", "/admin/booking?id=BK_BENCH_200"],
    ["GET /admin/bookings?q=<email>", "/admin/bookings?q=bk_bench_200%40example.com"],
    ["GET /admin/events (newest 40)", "/admin/events"],
  ]) {
    const r = await (await SELF.fetch(`${BASE}${path}`, { headers: { cookie } })).text();
    // Timeline entries only on a booking's page (the other pages have none to count).
    const entries = path.startsWith("/admin/booking?") ? (r.match(/data-kind=/g) ?? []).length : undefined;
    console.log(`BENCH_ADMIN ${JSON.stringify({ scenario: label, entries, html_kb: Math.round(r.length / 1024), ...(await timed(RUNS, get(path))) })}`);
  }
});
