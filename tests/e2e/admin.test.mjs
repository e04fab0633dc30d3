// The owner's admin inside workerd: the exact failed-login limit in D1 (50 concurrent attempts),
// sessions (hash-only storage, expiry, foreign tokens, sign-out), CSRF and origin checks, and each
// page's data for a booking that walked its journey, with hostile guest names escaped.
import { env, SELF, runInDurableObject } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import {
  bookingDelivery,
  enqueueEmail,
  eventually,
  handedOver,
  outboxState,
  outboxStub,
  postLiteapi,
  postGeneric,
  rows,
  sendThrough,
  sweep,
  unique,
  item,
} from "./helpers.mjs";

const BASE = "https://engine.test";
const OWNER = { account: "owner", password: "test-admin-password-1" };
const SECOND = { account: "second", password: "test-admin-password-2" };
const EVIL_FIRST = "<script>alert(1)</script>";
const EVIL_LAST = '"><img src=x onerror=alert(2)>';

let ipCounter = 0;
/** A fresh client IP per call (the limiter counts per IP). */
function freshIp() {
  ipCounter += 1;
  return `198.51.100.${ipCounter}`;
}

function attempt({ account, password }, ip, extra = {}) {
  const body = new URLSearchParams({ account, password, next: "/admin", ...extra });
  return SELF.fetch(`${BASE}/admin/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": ip },
    body,
  });
}

/** Signs in; returns the cookie header value and the CSRF token from a page. */
async function signIn(who = OWNER) {
  const r = await attempt(who, freshIp());
  expect(r.status, await r.clone().text()).toBe(303);
  const setCookie = r.headers.get("set-cookie");
  const cookie = setCookie.split(";")[0];
  const page = await get("/admin/suppressions", cookie);
  const html = await page.text();
  const csrf = /name="csrf" value="([0-9a-f]+)"/.exec(html)[1];
  return { cookie, csrf, setCookie };
}

/** The `admin_sessions.session_hash` of a session cookie (`name=token`): SHA-256 of the token, lowercase hex. */
async function sessionHash(cookie) {
  const token = cookie.split("=")[1];
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

function get(path, cookie) {
  return SELF.fetch(`${BASE}${path}`, { redirect: "manual", headers: cookie ? { cookie } : {} });
}

function post(path, cookie, fields, headers = {}) {
  return SELF.fetch(`${BASE}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie, ...headers },
    body: new URLSearchParams(fields),
  });
}

function counts(responses) {
  const by = {};
  for (const r of responses) by[r.status] = (by[r.status] ?? 0) + 1;
  return by;
}

describe("failed-login limit (D1, exact)", () => {
  it("allows exactly 5 of 50 concurrent wrong attempts on one account, the rest 429 with Retry-After", async () => {
    const ip = freshIp();
    const victim = { account: "owner", password: "wrong-password" };
    const rs = await Promise.all(Array.from({ length: 50 }, () => attempt(victim, ip)));
    expect(counts(rs)).toEqual({ 401: 5, 429: 45 });
    const limited = rs.find((r) => r.status === 429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(800);
    const html = await limited.text();
    expect(html).toContain('class="error"');
    expect(html).toContain("Too many sign-in attempts for this account");
    // The account counts only the attempts its IP let through (the IP allows 20 a window).
    const [row] = await rows("SELECT attempts FROM admin_login_limits WHERE limit_key = 'account:owner'");
    expect(row.attempts).toBe(20);
    // Per account: the right password from another address is refused too while the window lasts.
    expect((await attempt(OWNER, freshIp())).status).toBe(429);
    // Another account is untouched.
    const other = await attempt(SECOND, freshIp());
    expect(other.status).toBe(303);
    // Open the window again for the other tests.
    await env.DB.prepare("DELETE FROM admin_login_limits WHERE limit_key = 'account:owner'").run();
  });

  it("allows exactly 20 of 50 concurrent attempts from one IP across accounts", async () => {
    const ip = freshIp();
    const rs = await Promise.all(
      Array.from({ length: 50 }, (_, i) => attempt({ account: `nobody-${i}`, password: "x" }, ip)),
    );
    expect(counts(rs)).toEqual({ 401: 20, 429: 30 });
    const html = await rs.find((r) => r.status === 429).text();
    expect(html).toContain("from this address");
    // The same accounts from another IP are not limited by that IP's counter.
    expect((await attempt({ account: "nobody-1", password: "x" }, freshIp())).status).toBe(401);
  });

  it("a success resets only that account's counter and gives back its IP slot", async () => {
    const ip = freshIp();
    const wrong = { account: "second", password: "nope" };
    for (let i = 0; i < 3; i++) expect((await attempt(wrong, ip)).status).toBe(401);
    // Another account's failures from the same IP stay counted.
    expect((await attempt({ account: "nobody-x", password: "x" }, ip)).status).toBe(401);
    expect((await attempt(SECOND, ip)).status).toBe(303);
    expect(await rows("SELECT * FROM admin_login_limits WHERE limit_key = 'account:second'")).toEqual([]);
    const [ipRow] = await rows("SELECT attempts FROM admin_login_limits WHERE limit_key = ?", `ip:${ip}`);
    expect(ipRow.attempts).toBe(4);
    const [other] = await rows("SELECT attempts FROM admin_login_limits WHERE limit_key = 'account:nobody-x'");
    expect(other.attempts).toBe(1);
    // The account has its whole allowance again: 5 wrong, then 429.
    const again = [];
    for (let i = 0; i < 6; i++) again.push((await attempt(wrong, freshIp())).status);
    expect(again).toEqual([401, 401, 401, 401, 401, 429]);
    await env.DB.prepare("DELETE FROM admin_login_limits WHERE limit_key = 'account:second'").run();
  });

  it("10,000 attempts with random names from one IP store at most 21 counters; a sweep deletes the expired windows", { timeout: 600_000 }, async () => {
    const ip = freshIp();
    const before = (await rows("SELECT COUNT(*) AS n FROM admin_login_limits"))[0].n;
    const statuses = {};
    for (let batch = 0; batch < 100; batch++) {
      const rs = await Promise.all(
        Array.from({ length: 100 }, (_, i) => attempt({ account: `r${batch}x${i}${unique("")}`.slice(0, 60), password: "x" }, ip)),
      );
      for (const r of rs) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    }
    expect(statuses).toEqual({ 401: 20, 429: 9_980 });
    const after = (await rows("SELECT COUNT(*) AS n FROM admin_login_limits"))[0].n;
    // One counter for the IP and one per name it was allowed to try (max_per_ip = 20).
    expect(after - before).toBe(21);
    console.log(`limiter: 10,000 attempts with random names from one IP → ${after - before} rows`);

    // Expired windows go with the sweep; a live one stays.
    const live = freshIp();
    expect((await attempt({ account: "nobody-live", password: "x" }, live)).status).toBe(401);
    await env.DB.prepare("UPDATE admin_login_limits SET window_start_ms = 0 WHERE limit_key NOT IN (?, 'account:nobody-live')").bind(`ip:${live}`).run();
    // A tick deletes at most SWEEP_BATCH of them (earlier tests left more): tick until none is left.
    for (let tick = 0; tick < 5 && (await rows("SELECT 1 FROM admin_login_limits WHERE window_start_ms = 0")).length; tick++) await sweep();
    expect(await rows("SELECT limit_key FROM admin_login_limits WHERE window_start_ms = 0")).toEqual([]);
    expect(await rows("SELECT limit_key FROM admin_login_limits WHERE limit_key = ?", `ip:${live}`)).toHaveLength(1);
  });

  it("a name that cannot be an account is counted, never stored raw, and answers like a wrong password", async () => {
    const r = await attempt({ account: "<script>x</script>\r\n", password: "x" }, freshIp());
    expect(r.status).toBe(401);
    const html = await r.text();
    expect(html).toContain("Wrong account or password.");
    expect(html).not.toContain("<script>x");
    const stored = await rows("SELECT limit_key FROM admin_login_limits WHERE limit_key LIKE 'account:%script%'");
    expect(stored).toEqual([]);
  });
});

describe("sessions", () => {
  it("stores only the token's hash, sets a __Host- cookie, expires, and signs out", async () => {
    const { cookie, csrf, setCookie } = await signIn();
    expect(setCookie).toMatch(/^__Host-admin_session=[0-9a-f]{64}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/);
    const token = cookie.split("=")[1];
    expect(await rows("SELECT * FROM admin_sessions WHERE session_hash = ?", token)).toEqual([]);
    expect((await rows("SELECT account FROM admin_sessions WHERE account = 'owner'")).length).toBeGreaterThan(0);
    const ok = await get("/admin", cookie);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("<h1>Overview</h1>");
    expect(ok.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(ok.headers.get("cache-control")).toBe("no-store");
    // same-origin, not no-referrer: under no-referrer Chromium posts the page's own forms with
    // `Origin: null`, which the origin check refuses (tests/browser/admin.browser.mjs).
    expect(ok.headers.get("referrer-policy")).toBe("same-origin");
    const nullOrigin = await post("/admin/suppressions/add", cookie, { csrf, email: "x@example.com", reason: "complaint", note: "n" }, { origin: "null" });
    expect(nullOrigin.status).toBe(403);

    // A token this engine never issued (another key, a guess) is no session.
    const foreign = await get("/admin/queue", `__Host-admin_session=${"ab".repeat(32)}`);
    expect(foreign.status).toBe(303);
    expect(foreign.headers.get("location")).toBe("/admin/login?next=%2Fadmin%2Fqueue");

    // Sign-out ends it for good.
    const out = await post("/admin/logout", cookie, { csrf });
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await get("/admin", cookie)).status).toBe(303);
  });

  it("an expired session is sent to the sign-in page, keeping where it was going", async () => {
    const { cookie } = await signIn(SECOND);
    const hash = await sessionHash(cookie);
    await env.DB.prepare("UPDATE admin_sessions SET expires_at_ms = ?1 WHERE session_hash = ?2").bind(Date.now() - 1, hash).run();
    const r = await get("/admin/bookings?q=abc", cookie);
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/admin/login?next=%2Fadmin%2Fbookings%3Fq%3Dabc");
    const form = await get("/admin/login?next=%2Fadmin%2Fbookings%3Fq%3Dabc");
    const html = await form.text();
    expect(html).toContain('name="next" value="/admin/bookings?q=abc"');
    // An outside `next` is never followed.
    const sneaky = await attempt(SECOND, freshIp(), { next: "//evil.example/admin" });
    expect(sneaky.headers.get("location")).toBe("/admin");
  });
});

describe("sessions end with their credential", () => {
  it("a session signed in with another password hash (or a removed account) is no session", async () => {
    const { cookie } = await signIn(SECOND);
    const hash = await sessionHash(cookie);
    expect((await get("/admin", cookie)).status).toBe(200);
    const [{ credential_tag: tag }] = await rows("SELECT credential_tag FROM admin_sessions WHERE session_hash = ?", hash);
    // A new password for the account: the stored tag no longer matches its hash.
    await env.DB.prepare("UPDATE admin_sessions SET credential_tag = 'feedfacefeedface' WHERE session_hash = ?1").bind(hash).run();
    expect((await get("/admin", cookie)).status).toBe(303);
    // The account removed from ADMIN_ACCOUNTS: no account of that name, whatever the tag.
    await env.DB.prepare("UPDATE admin_sessions SET account = 'removed', credential_tag = ?2 WHERE session_hash = ?1").bind(hash, tag).run();
    expect((await get("/admin", cookie)).status).toBe(303);
    // Put back as it was, it is a session again (the checks above are the account and the tag).
    await env.DB.prepare("UPDATE admin_sessions SET account = 'second' WHERE session_hash = ?1").bind(hash).run();
    expect((await get("/admin", cookie)).status).toBe(200);
  });
});

describe("CSRF and methods", () => {
  it("refuses a form without the session's token or from another origin, and changes nothing", async () => {
    const a = await signIn();
    const b = await signIn(SECOND);
    const address = `${unique("csrf")}@example.com`;
    const fields = { email: address, reason: "hard_bounce", note: "bounced twice" };
    const none = await post("/admin/suppressions/add", a.cookie, fields);
    expect(none.status).toBe(403);
    expect(await none.text()).toContain("security token");
    const foreignToken = await post("/admin/suppressions/add", a.cookie, { ...fields, csrf: b.csrf });
    expect(foreignToken.status).toBe(403);
    const foreignOrigin = await post("/admin/suppressions/add", a.cookie, { ...fields, csrf: a.csrf }, { origin: "https://evil.example" });
    expect(foreignOrigin.status).toBe(403);
    expect(await rows("SELECT * FROM suppressions WHERE email = ?", address)).toEqual([]);
    const ok = await post("/admin/suppressions/add", a.cookie, { ...fields, csrf: a.csrf }, { origin: BASE });
    expect(ok.status).toBe(303);
    expect(await rows("SELECT reason, source, detail FROM suppressions WHERE email = ?", address)).toEqual([
      { reason: "hard_bounce", source: "operator:owner", detail: "bounced twice" },
    ]);
  });

  it("answers 405 with Allow for a wrong method and 404 pages for unknown ids", async () => {
    const { cookie } = await signIn();
    const put = await SELF.fetch(`${BASE}/admin/queue`, { method: "PUT", headers: { cookie } });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD");
    const getLogout = await get("/admin/logout", cookie);
    expect(getLogout.status).toBe(405);
    const noBooking = await get("/admin/booking?id=BK_never", cookie);
    expect(noBooking.status).toBe(404);
    expect(await noBooking.text()).toContain("No booking BK_never on record.");
    const noEmail = await get(`/admin/email?key=${encodeURIComponent("booking_confirmation:none")}`, cookie);
    expect(noEmail.status).toBe(404);
    const badSource = await get("/admin/events?source=nope", cookie);
    expect(badSource.status).toBe(400);
    const badDate = await get("/admin/events?date=yesterday", cookie);
    expect(badDate.status).toBe(400);
  });

  it("the JSON operator API accepts a session (with x-csrf-token for writes) as well as the bearer token", async () => {
    const { cookie, csrf } = await signIn();
    const state = await get("/admin/outbox?limit=1", cookie);
    expect(state.status).toBe(200);
    expect(await state.json()).toHaveProperty("counts");
    const body = JSON.stringify({ dedupeKey: "booking_confirmation:none" });
    const noToken = await SELF.fetch(`${BASE}/admin/outbox/redrive`, { method: "POST", headers: { cookie }, body });
    expect(noToken.status).toBe(401);
    const withToken = await SELF.fetch(`${BASE}/admin/outbox/redrive`, { method: "POST", headers: { cookie, "x-csrf-token": csrf }, body });
    expect(withToken.status).toBe(404);
    const anonymous = await SELF.fetch(`${BASE}/admin/outbox?limit=1`);
    expect(anonymous.status).toBe(401);
  });
});

describe("pages", () => {
  it("find a booking with a hostile guest name, its timeline, and its confirmation as sent", async () => {
    const email = `${unique("guest")}@example.com`;
    const d = bookingDelivery({ email });
    const envelope = JSON.parse(d.body);
    const response = JSON.parse(envelope.response);
    response.data.holder.firstName = EVIL_FIRST;
    response.data.holder.lastName = EVIL_LAST;
    envelope.response = JSON.stringify(response);
    expect((await postLiteapi(JSON.stringify(envelope))).status).toBe(202);
    await handedOver(d.bookingId);
    const key = `booking_confirmation:${d.bookingId}`;
    await sendThrough(key);

    const { cookie } = await signIn();
    for (const q of [d.bookingId, email.toUpperCase(), `${EVIL_FIRST} ${EVIL_LAST}`]) {
      const r = await get(`/admin/bookings?q=${encodeURIComponent(q)}`, cookie);
      const html = await r.text();
      expect(html, q).toContain(`class="booking-link" href="/admin/booking?id=${encodeURIComponent(d.bookingId)}"`);
      expect(html).not.toContain("<script>alert");
      expect(html).not.toContain("<img src=x");
    }

    const t = await get(`/admin/booking?id=${encodeURIComponent(d.bookingId)}`, cookie);
    expect(t.status).toBe(200);
    const html = await t.text();
    expect(html).toContain(`<h1>Booking ${d.bookingId}</h1>`);
    expect(html).not.toContain("<script>alert");
    expect(html).not.toContain("<img src=x");
    expect(html).toContain("&#60;script&#62;alert(1)&#60;/script&#62;");
    const kinds = [...html.matchAll(/data-kind="([a-z_]+)"/g)].map((m) => m[1]);
    for (const k of ["raw_event", "booking", "planned_send", "email"]) expect(kinds, k).toContain(k);
    expect(html).toContain("booking.book");
    expect(html).toContain(`href="/admin/email?key=${encodeURIComponent(key)}"`);
    expect(html).toMatch(/due at the hotel \d{4}-\d\d-\d\d 08:00 [+-]\d\d:\d\d /);
    // The guest's language and where it came from (a liteAPI booking states none: the default).
    expect(html).toContain("guest language en (from default)");

    const e = await get(`/admin/email?key=${encodeURIComponent(key)}`, cookie);
    expect(e.status).toBe(200);
    const eh = await e.text();
    const [sent] = await rows("SELECT subject, status, provider FROM emails WHERE dedupe_key = ?", key);
    expect(sent.status).toBe("sent");
    expect(eh).toContain('id="email-html" sandbox=""');
    expect(eh).toContain('id="email-text"');
    expect(eh).toContain(sent.provider);
    expect(eh).not.toContain("<script>alert");
    const frame = await get(`/admin/email/html?key=${encodeURIComponent(key)}`, cookie);
    expect(frame.status).toBe(200);
    expect(frame.headers.get("content-security-policy")).toMatch(/^sandbox; default-src 'none'/);
    const [content] = await rows("SELECT html_body, text_body FROM email_contents WHERE dedupe_key = ?", key);
    expect(await frame.text()).toBe(content.html_body);
    // Client mail never links the admin.
    expect(content.html_body).not.toContain("/admin");
    expect(content.text_body).not.toContain("/admin");
    // Without a session the frame is not served either.
    expect((await get(`/admin/email/html?key=${encodeURIComponent(key)}`)).status).toBe(303);
  });

  it("a timeline of 200 events lists the oldest 40, oldest first, and says there were more", async () => {
    const email = `${unique("many")}@example.com`;
    const d = bookingDelivery({ email });
    expect((await postLiteapi(d.body)).status).toBe(202);
    await handedOver(d.bookingId);
    const base = Date.now() - 1_000_000;
    const stmts = [];
    for (let i = 0; i < 200; i++) {
      stmts.push(
        env.DB.prepare(
          "INSERT INTO raw_events (source, event_id, event_name, status, headers_json, body, received_at_ms, booking_id) VALUES ('liteapi', ?1, 'booking.checkinInstruction', 'started', '{}', '{}', ?2, ?3)",
        ).bind(unique("evt_many_"), base + i, d.bookingId),
      );
    }
    await env.DB.batch(stmts);
    const { cookie } = await signIn();
    const r = await get(`/admin/booking?id=${encodeURIComponent(d.bookingId)}`, cookie);
    const html = await r.text();
    const raw = [...html.matchAll(/data-kind="raw_event"/g)].length;
    // domain::admin::timeline::MAX_RAW_EVENTS: what fits the page's byte budget at the worst.
    expect(raw).toBe(40);
    const shown = [...html.matchAll(/event id (evt_many_[^<]+)</g)].map((m) => m[1]);
    const oldest = await rows("SELECT event_id FROM raw_events WHERE booking_id = ? ORDER BY received_at_ms LIMIT 40", d.bookingId);
    expect(shown).toEqual(oldest.map((o) => o.event_id));
    expect(html).toContain("Some kinds had more rows than one page shows");
  });

  it("outbox: lists a dead letter, redrives it, pauses and resumes a provider", async () => {
    const key = await enqueueEmail(`${unique("dead")}@example.com`);
    await runInDurableObject(outboxStub(), async (_o, st) => {
      st.storage.sql.exec("UPDATE queue SET status = 'dead', last_error = 'test: every provider refused' WHERE dedupe_key = ?", key);
    });
    const { cookie, csrf } = await signIn();
    const page = await get("/admin/queue", cookie);
    const html = await page.text();
    expect(html).toContain('class="dead-letter"');
    expect(html).toContain(key);
    const r = await post("/admin/queue/redrive", cookie, { csrf, dedupe_key: key });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe(`/admin/queue?done=redriven&key=${encodeURIComponent(key)}`);
    expect(item(await outboxState(), key).status).toBe("queued");
    const after = await (await get(r.headers.get("location"), cookie)).text();
    expect(after).toContain(`<p class="flash">Redriven: ${key} is queued again.</p>`);
    // A second redrive: not a dead letter any more.
    const again = await post("/admin/queue/redrive", cookie, { csrf, dedupe_key: key });
    expect(again.headers.get("location")).toContain("done=not_dead");

    const pause = await post("/admin/queue/provider", cookie, { csrf, provider: "smtp", action: "pause" });
    expect(pause.status).toBe(303);
    expect((await outboxState()).smtpPausedUntilMs).toBeGreaterThan(Date.now() + 3_000_000);
    const paused = await (await get("/admin/queue", cookie)).text();
    expect(paused).toMatch(/SMTP failover[^<]*<\/td><td>paused until/);
    await post("/admin/queue/provider", cookie, { csrf, provider: "smtp", action: "resume" });
    expect((await outboxState()).smtpPausedUntilMs ?? 0).toBeLessThanOrEqual(Date.now());
    const bad = await post("/admin/queue/provider", cookie, { csrf, provider: "carrier-pigeon", action: "pause" });
    expect(bad.status).toBe(400);
  });

  it("holds: the same one-time action as the owner's links", async () => {
    const holdId = unique("hold_");
    const prebookId = unique("PB_");
    const now = Date.now();
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO checkout_attempts (prebook_id, email, guest_name, hotel_id, checkin, checkout, attempt_day, attempted_at_ms, details_json) VALUES (?1, 'tester@example.com', ?2, 'lp_fake_1001', '2027-01-10', '2027-01-12', '2026-12-01', ?3, '{}')",
      ).bind(prebookId, EVIL_FIRST, now),
      env.DB.prepare("INSERT INTO holds (hold_id, status, reason, prebook_id, created_at_ms) VALUES (?1, 'held', 'same card, many names', ?2, ?3)").bind(holdId, prebookId, now),
    ]);
    const { cookie, csrf } = await signIn();
    const html = await (await get("/admin/holds", cookie)).text();
    expect(html).toContain(holdId);
    expect(html).not.toContain("<script>alert");
    for (const a of ["send_insufficient_funds", "send_security_check", "dismiss"]) expect(html).toContain(`value="${a}"`);
    const r = await post("/admin/holds/act", cookie, { csrf, hold_id: holdId, action: "dismiss" });
    expect(r.headers.get("location")).toBe(`/admin/holds?done=hold_dismissed&key=${encodeURIComponent(holdId)}`);
    expect(await rows("SELECT status, action FROM holds WHERE hold_id = ?", holdId)).toEqual([{ status: "dismissed", action: "dismiss" }]);
    expect(await rows("SELECT token_id FROM owner_actions WHERE hold_id = ?", holdId)).toEqual([{ token_id: `admin:${holdId}` }]);
    const twice = await post("/admin/holds/act", cookie, { csrf, hold_id: holdId, action: "send_security_check" });
    expect(twice.headers.get("location")).toContain("done=hold_handled");
    const unknown = await post("/admin/holds/act", cookie, { csrf, hold_id: "hold_none", action: "dismiss" });
    expect(unknown.status).toBe(404);
    const badAction = await post("/admin/holds/act", cookie, { csrf, hold_id: holdId, action: "refund_now" });
    expect(badAction.status).toBe(400);
  });

  it("raw events: filters by source, status (rejected) and day", async () => {
    const r = await postLiteapi("{not json");
    expect(r.status).toBe(400);
    const { cookie } = await signIn();
    const day = new Date().toISOString().slice(0, 10);
    const html = await (await get(`/admin/events?source=liteapi&status=rejected&date=${day}`, cookie)).text();
    expect(html).toContain('class="event"');
    expect(html).toContain("{not json");
    const statuses = [...html.matchAll(/<span class="badge ([a-z]+)">/g)].map((m) => m[1]);
    expect(new Set(statuses)).toEqual(new Set(["rejected"]));
    const none = await (await get("/admin/events?source=duffel&status=rejected&date=2020-01-01", cookie)).text();
    expect(none).not.toContain('class="event"');
  });

  it("raw events: pages 150 events of one millisecond without losing any", async () => {
    const at = Date.UTC(2020, 5, 1, 12, 0, 0);
    const stmts = [];
    for (let i = 0; i < 150; i++) {
      stmts.push(env.DB.prepare("INSERT INTO raw_events (source, event_id, event_name, status, headers_json, body, received_at_ms) VALUES ('duffel', ?1, 'order.created', 'ignored', '{}', '{}', ?2)").bind(unique("evt_burst_"), at));
    }
    await env.DB.batch(stmts);
    const { cookie } = await signIn();
    // Pages of 40 (the events page's budget, domain::admin::timeline::EVENTS_PAGE_ROWS).
    const pages = [await (await get("/admin/events?source=duffel&status=ignored&date=2020-06-01", cookie)).text()];
    for (let older; (older = /id="older" href="([^"]+)"/.exec(pages.at(-1))); ) {
      const link = older[1].replaceAll("&#38;", "&").replaceAll("&amp;", "&");
      expect(link).toMatch(/before=\d+\.\d+$/);
      pages.push(await (await get(link, cookie)).text());
    }
    expect(pages.map((html) => [...html.matchAll(/class="event"/g)].length)).toEqual([40, 40, 40, 30]);
    const ids = (html) => [...html.matchAll(/<span class="muted">(evt_burst_[^<]+)<\/span>/g)].map((m) => m[1]);
    expect(new Set(pages.flatMap(ids)).size).toBe(150);
    expect((await get("/admin/events?before=12", cookie)).status).toBe(400);
  });

  it("raw bodies: 101 maximal bodies of quotes keep the events page and the timeline under 512 KiB; each whole body is its own download", { timeout: 180_000 }, async () => {
    // 256 KiB of `"` (the production MAX_WEBHOOK_BODY_BYTES), each `"` six bytes once escaped:
    // whole, 101 of them would be ~160 MB of HTML.
    const quotes = '"'.repeat(262_144);
    const at = Date.UTC(2020, 6, 1, 12, 0, 0);
    const bookingId = unique("BK_big_");
    await env.DB.prepare("INSERT INTO contacts (email, first_name, last_name, created_at_ms, updated_at_ms) VALUES (?1, 'Big', 'Bodies', ?2, ?2) ON CONFLICT(email) DO NOTHING").bind(`${bookingId.toLowerCase()}@example.com`, at).run();
    await env.DB.prepare("INSERT INTO bookings (booking_id, source, kind, contact_email, status, details_json, created_at_ms, updated_at_ms) VALUES (?1, 'liteapi', 'hotel', ?2, 'CONFIRMED', '{}', ?3, ?3)").bind(bookingId, `${bookingId.toLowerCase()}@example.com`, at).run();
    for (let i = 0; i < 101; i++) {
      const body = i === 0 ? `{"big": ${JSON.stringify("x".repeat(262_000))}}` : quotes;
      await env.DB.prepare("INSERT INTO raw_events (source, event_id, event_name, status, headers_json, body, received_at_ms, booking_id) VALUES ('stripe', ?1, 'charge.refunded', 'ignored', '{}', ?2, ?3, ?4)").bind(unique("evt_big_"), body, at + i, bookingId).run();
    }
    const { cookie } = await signIn();
    const events = await get("/admin/events?source=stripe&status=ignored&date=2020-07-01", cookie);
    expect(events.status).toBe(200);
    const html = await events.text();
    expect([...html.matchAll(/class="event"/g)].length).toBe(40);
    const bytes = new TextEncoder().encode(html).length;
    console.log(`admin events page over 101 bodies of 256 KiB of quotes: ${bytes} bytes of HTML`);
    expect(bytes).toBeLessThan(512 * 1024);
    expect(html).toContain("261644 more characters");
    const timeline = await (await get(`/admin/booking?id=${bookingId}`, cookie)).text();
    const timelineBytes = new TextEncoder().encode(timeline).length;
    console.log(`admin timeline with 101 such raw events: ${timelineBytes} bytes of HTML`);
    expect(timelineBytes).toBeLessThan(512 * 1024);
    // The oldest 40 received events (domain::admin::timeline::MAX_RAW_EVENTS), and a note that
    // there were more.
    expect([...timeline.matchAll(/class="body-link"/g)].length).toBe(40);
    expect(timeline).toContain("Some kinds had more rows than one page shows; the oldest of each are shown (40 events received, 500 of every other kind).");

    // The whole body, on its own: streamed, a download, nothing that runs.
    const [first, second] = await rows("SELECT id FROM raw_events WHERE booking_id = ? ORDER BY received_at_ms LIMIT 2", bookingId);
    const whole = await get(`/admin/events/body?id=${second.id}`, cookie);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(whole.headers.get("content-disposition")).toBe(`attachment; filename="raw-event-${second.id}.txt"`);
    expect(whole.headers.get("x-content-type-options")).toBe("nosniff");
    expect(whole.headers.get("content-security-policy")).toContain("sandbox");
    expect(await whole.text()).toBe(quotes);
    const json = await get(`/admin/events/body?id=${first.id}`, cookie);
    expect(json.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect((await json.json()).big).toHaveLength(262_000);
    // Signed in only; unknown ids are a 404 page.
    expect((await get(`/admin/events/body?id=${second.id}`)).status).toBe(303);
    expect((await get("/admin/events/body?id=999999999", cookie)).status).toBe(404);
    expect((await get("/admin/events/body?id=x", cookie)).status).toBe(400);
  });

  it("rejected deliveries claiming a 256 KiB id: the stored error is bounded, the events page stays under 512 KiB and still names the problem", { timeout: 180_000 }, async () => {
    // A signed generic delivery whose webhook-id is 256 KiB of `"`: the id is refused (too long)
    // and quoted in the rejection's error. Quoted whole, each `"` would be `\"`, 11 bytes of HTML.
    const claimed = '"'.repeat(262_144);
    for (let i = 0; i < 100; i++) {
      const { response } = await postGeneric(JSON.stringify({ type: "hotel_booked", data: {} }), { id: claimed });
      expect(response.status).toBe(400);
    }
    const day = new Date().toISOString().slice(0, 10);
    const stored = await rows(
      "SELECT COUNT(*) AS n, MAX(length(CAST(error AS BLOB))) AS longest FROM raw_events WHERE source = 'generic' AND status = 'rejected' AND error LIKE '%(event_id \"\\\"%'",
    );
    expect(stored[0].n).toBeGreaterThanOrEqual(100);
    // The claimed id is quoted cut (200 characters, domain::text::quoted), the column at 1,000 bytes.
    expect(stored[0].longest).toBeLessThanOrEqual(1000);
    const { cookie } = await signIn();
    const html = await (await get(`/admin/events?source=generic&status=rejected&date=${day}`, cookie)).text();
    const bytes = new TextEncoder().encode(html).length;
    console.log(`admin events page over 100 rejected deliveries claiming 256 KiB ids: ${bytes} bytes of HTML`);
    expect(bytes).toBeLessThan(512 * 1024);
    const errors = [...html.matchAll(/<div class="error">([^<]*)<\/div>/g)].map((m) => m[1]);
    expect(errors).toHaveLength(40);
    // Each still says what was wrong, and which id it claimed (cut).
    for (const e of errors) expect(e).toMatch(/^field `webhook-id` is invalid: is longer than 256 characters \(event_id &#34;(\\&#34;)+\\?…$/);
  });

  it("errors on admin pages are pages: a form body too large answers a 413 page", async () => {
    const { cookie, csrf } = await signIn();
    const r = await post("/admin/suppressions/add", cookie, { csrf, email: "a@example.com", reason: "complaint", note: "x".repeat(20_000) });
    expect(r.status).toBe(413);
    expect(r.headers.get("content-type")).toContain("text/html");
    expect(await r.text()).toContain("<h1>Too large</h1>");
  });

  it("suppressions: add and remove with the reason kept", async () => {
    const { cookie, csrf } = await signIn();
    const address = `${unique("supp")}@example.com`;
    expect((await post("/admin/suppressions/add", cookie, { csrf, email: address, reason: "complaint", note: "asked by phone" })).headers.get("location")).toContain("done=added");
    expect((await post("/admin/suppressions/add", cookie, { csrf, email: address, reason: "complaint", note: "again" })).headers.get("location")).toContain("done=already");
    const removed = await post("/admin/suppressions/remove", cookie, { csrf, email: address, note: "guest wrote back" });
    expect(removed.headers.get("location")).toContain("done=removed");
    expect(await rows("SELECT * FROM suppressions WHERE email = ?", address)).toEqual([]);
    const log = await rows("SELECT change, reason, source, detail, note, by_account FROM suppression_log WHERE email = ? ORDER BY id", address);
    expect(log).toEqual([
      { change: "added", reason: "complaint", source: "operator:owner", detail: null, note: "asked by phone", by_account: "owner" },
      { change: "removed", reason: "complaint", source: "operator:owner", detail: "asked by phone", note: "guest wrote back", by_account: "owner" },
    ]);
    const page = await (await get(`/admin/suppressions?email=${encodeURIComponent(address)}`, cookie)).text();
    expect(page).toContain("guest wrote back");
    expect((await post("/admin/suppressions/add", cookie, { csrf, email: "not-an-address", reason: "complaint", note: "x" })).status).toBe(400);
    expect((await post("/admin/suppressions/add", cookie, { csrf, email: address, reason: "because", note: "x" })).status).toBe(400);
    expect((await post("/admin/suppressions/remove", cookie, { csrf, email: address, note: "   " })).status).toBe(400);
  });

  it("the overview counts what waits, what is dead and what is held", async () => {
    const { cookie } = await signIn();
    const html = await (await get("/admin", cookie)).text();
    expect(html).toContain('id="providers-overview"');
    expect(html).toContain('id="queue-by-rank"');
    expect(html).toContain('id="email-counts"');
    const [{ n }] = await rows("SELECT COUNT(*) AS n FROM holds WHERE status = 'held'");
    expect(html).toContain(`<b>${n}</b><a href="/admin/holds">open holds</a>`);
  });
});
