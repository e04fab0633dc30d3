// Starts what the end-to-end tests talk to, on free ports chosen now (provided to the test config),
// and stops it all at the end:
// - a real SMTP server with a REST API (maildev) for the failover tests (maildevSmtpPort/WebPort);
// - a fake of the suppliers' read APIs (supplierApiPort);
// - a fake Resend API (resendPort) that keeps Idempotency-Keys like Resend does and fails on
//   command;
// - an SMTP server that requires AUTH and refuses every password but one (authSmtpPort), built on
//   the `smtp-server` library (the one maildev uses);
// - a fake of Stripe's refunds API (stripePort, tests/e2e/fake-stripe.mjs) that keeps
//   Idempotency-Keys like Stripe does and fails on command;
// - a receiver of the engine's outbound webhooks (webhookReceiverPort,
//   tests/e2e/webhook-receiver.mjs) that verifies Standard Webhooks signatures and fails on command;
// - an SMTP server scripted per case on node:net (scriptedSmtpPort, its control API on
//   scriptedSmtpControlPort; tests/e2e/scripted-smtp.mjs) that answers the final dot with a bare
//   `250`, a blank line first, silence … and counts the DATA transactions per recipient;
// - the calendar check (calendarCheckPort): every calendar part the servers above receive (the
//   Resend fake's attachments, the SMTP servers' MIME parts, maildev's messages) is read by two
//   parsers, ical.js and node-ical, and every reservation markup block of their HTML parts is
//   checked against the properties Gmail requires (tests/e2e/calendar-check.mjs);
//   `POST /_test/calendars` (with what workerd caught: `{calendars, html}`) or `GET` answers
//   `{checked, problems}` and clears the problems, and the setup file every e2e configuration
//   loads (tests/e2e/calendars-parse.mjs) fails the test file whose drain finds one. The same
//   server answers `POST /_test/parse` (an .ics → what both parsers read of it) and
//   `GET /_test/intl?locale=&amount=&currency=` / `&date=` / `&time=` (what Node's `Intl` writes:
//   the regional formats the e2e tests compare the emails with).
import { spawn } from "node:child_process";
import { createServer as createHttpServer } from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeStripe } from "./fake-stripe.mjs";
import { startWebhookReceiver } from "./webhook-receiver.mjs";
import { startScriptedSmtp } from "./scripted-smtp.mjs";
import { simpleParser } from "mailparser";
import { calendarProblems, isCalendarType, markupProblems, readBoth } from "./calendar-check.mjs";
import { freePort, waitForHttp } from "../../scripts/lib.mjs";

/** Calendar parts the Node-side servers saw: how many were checked, what was wrong (drained). */
const calendars = { checked: 0, problems: [] };
/** MIME checks still parsing (a drain waits for them, so a message is never judged late). */
const pending = new Set();

/** Checks one calendar part, `where` naming who received it. */
function checkCalendar(where, ics, contentType) {
  calendars.checked += 1;
  for (const problem of calendarProblems(ics, contentType)) calendars.problems.push(`${where}: ${problem}`);
}

/** Checks the reservation markup of one HTML part, `where` naming who received it. */
function checkMarkup(where, html) {
  for (const problem of markupProblems(html)) calendars.problems.push(`${where}: ${problem}`);
}

/** Checks every text/calendar part of a raw MIME message (parsed with mailparser). */
function checkMime(where, raw) {
  const check = parseAndCheck(where, raw).finally(() => pending.delete(check));
  pending.add(check);
  return check;
}

async function parseAndCheck(where, raw) {
  let parsed;
  try {
    parsed = await simpleParser(raw);
  } catch (e) {
    calendars.problems.push(`${where}: the message is not MIME mailparser can read: ${e?.message ?? e}`);
    return;
  }
  checkMarkup(`${where} (${parsed.subject ?? "no subject"})`, parsed.html);
  for (const a of parsed.attachments) {
    if (!isCalendarType(a.contentType)) continue;
    const params = a.headers.get("content-type")?.params ?? {};
    const type = [a.contentType, ...Object.entries(params).map(([k, v]) => `${k}=${v}`)].join("; ");
    checkCalendar(`${where} (${parsed.subject ?? "no subject"})`, a.content.toString("utf8"), type);
  }
}

/** The request's body, parsed as JSON (`{}` when empty). */
async function jsonBody(req) {
  let raw = "";
  for await (const chunk of req) raw += chunk;
  return raw ? JSON.parse(raw) : {};
}

/** What Node's `Intl` writes for the query of `GET /_test/intl` (see the module header). */
function intlAnswer(url) {
  const q = url.searchParams;
  const locale = q.get("locale");
  if (q.has("currency")) return new Intl.NumberFormat(locale, { style: "currency", currency: q.get("currency") }).format(Number(q.get("amount")));
  if (q.has("date")) return new Intl.DateTimeFormat(locale, { dateStyle: "full", timeZone: "UTC" }).format(new Date(`${q.get("date")}T12:00:00Z`));
  if (q.has("time")) return new Intl.DateTimeFormat(locale, { timeStyle: "short", timeZone: "UTC" }).format(new Date(`2027-03-05T${q.get("time")}:00Z`));
  return null;
}

/**
 * The calendar check's HTTP side: `/_test/calendars` checks what workerd caught (a POST body
 * `{calendars: [{to, subject, type, content}], html: [{to, subject, html}]}`), then reads the
 * maildev messages not read yet (their raw source, through `maildevApi()`) and waits for the MIME
 * checks under way, then answers `{checked, problems}` and clears the problems.
 */
function startCalendarCheck(maildevApi) {
  const seen = new Set();
  const server = createHttpServer(async (req, res) => {
    const url = new URL(req.url, "http://check");
    const answer = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "POST" && url.pathname === "/_test/parse") {
      const { ics } = await jsonBody(req);
      return answer(200, readBoth(String(ics ?? "")));
    }
    if (req.method === "GET" && url.pathname === "/_test/intl") {
      try {
        return answer(200, { text: intlAnswer(url) });
      } catch (e) {
        return answer(400, { error: String(e?.message ?? e) });
      }
    }
    if (url.pathname !== "/_test/calendars" || !["GET", "POST"].includes(req.method)) {
      res.writeHead(404);
      return res.end();
    }
    if (req.method === "POST") {
      const caught = await jsonBody(req);
      for (const c of caught.calendars ?? []) checkCalendar(`send_email to ${c.to} (${c.subject})`, c.content, c.type);
      for (const h of caught.html ?? []) checkMarkup(`send_email to ${h.to} (${h.subject})`, h.html);
    }
    try {
      const api = maildevApi();
      if (api) {
        const list = await (await fetch(`${api}/api/email`)).json();
        for (const email of list) {
          if (seen.has(email.id)) continue;
          seen.add(email.id);
          const raw = await (await fetch(`${api}/api/email/${encodeURIComponent(email.id)}/source`)).text();
          await checkMime(`maildev to ${email.to?.[0]?.address ?? "?"}`, raw);
        }
      }
    } catch (e) {
      calendars.problems.push(`maildev could not be read: ${e?.message ?? e}`);
    }
    await Promise.all([...pending]);
    const problems = calendars.problems.splice(0);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ checked: calendars.checked, problems }));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/**
 * A fake of the suppliers' read APIs the journeys call, serving the real-shaped fixtures:
 * - Duffel `GET /air/airline_initiated_changes?order_id=…` → the AIC list fixture for that order
 *   (order ids containing "nochange" get an empty list);
 * - liteAPI `GET /data/hotel?hotelId=…` → coordinates (Barcelona) for any id except ids containing
 *   "fail", which answer 500 ("failfirst": only the first lookup of the id fails, then Madrid);
 *   ids containing "madrid" answer Madrid.
 * Requests without the expected credentials answer 401, as the real APIs do. A test registers
 * the AIC list of its own order with `POST /_test/aic?order_id=…` (the list's JSON as the body).
 * `GET /__requests` lists every other request received (`{path, query, authorization}`), in order.
 */
function startSupplierApi() {
  const failedOnce = new Set();
  /** AIC lists a test registered for its order (`POST /_test/aic?order_id=…`, body `{data}`). */
  const registered = new Map();
  // Every request received, `{path, query, authorization}`, for `GET /__requests` (a test asserts
  // that the engine never called an API on some event's word).
  const received = [];
  const aic = JSON.parse(readFileSync(join(process.cwd(), "tests/fixtures/duffel-airline-initiated-change-object.json"), "utf8"));
  delete aic._modeled_on;
  const server = createHttpServer((req, res) => {
    const url = new URL(req.url, "http://fake");
    const send = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "POST" && url.pathname === "/_test/aic") {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", () => {
        registered.set(url.searchParams.get("order_id") ?? "", JSON.parse(raw));
        send(200, { ok: true });
      });
      return;
    }
    if (url.pathname === "/__requests") return send(200, received);
    received.push({ path: url.pathname, query: Object.fromEntries(url.searchParams), authorization: req.headers.authorization ?? req.headers["x-api-key"] ?? null });
    if (url.pathname === "/air/airline_initiated_changes") {
      if (req.headers.authorization !== "Bearer test-duffel-token") return send(401, { errors: [{ code: "unauthorized" }] });
      const order = url.searchParams.get("order_id") ?? "";
      if (registered.has(order)) return send(200, registered.get(order));
      if (order.includes("nochange")) return send(200, { data: [] });
      const body = structuredClone(aic);
      for (const change of body.data) change.order_id = order;
      return send(200, body);
    }
    if (url.pathname === "/data/hotel") {
      if (req.headers["x-api-key"] !== "test-liteapi-key") return send(401, { error: "unauthorized" });
      const id = url.searchParams.get("hotelId") ?? "";
      // "failfirst": the first lookup of the id fails, later ones find Madrid (a lookup the
      // sweeper retries).
      if (id.includes("failfirst")) {
        if (!failedOnce.has(id)) {
          failedOnce.add(id);
          return send(500, { error: "internal" });
        }
        return send(200, { data: { id, name: "Example Gran Via Hotel", location: { latitude: 40.4203, longitude: -3.7058 } } });
      }
      if (id.includes("fail")) return send(500, { error: "internal" });
      // Madrid, 3.7° W: the old longitude rule said UTC−00:15 there, the lookup says Europe/Madrid.
      if (id.includes("madrid")) return send(200, { data: { id, name: "Example Gran Via Hotel", location: { latitude: 40.4203, longitude: -3.7058 } } });
      return send(200, { data: { id, name: "Example Harbour Hotel", location: { latitude: 41.38, longitude: 2.18 } } });
    }
    send(404, { error: "not found" });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/** Resend's error body: `{statusCode, message, name}` (https://resend.com/docs/api-reference/errors). */
function resendError(res, status, name, message, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ statusCode: status, message, name }));
}

/**
 * A fake Resend API: `POST /emails` with `Authorization: Bearer test-resend-key`.
 * - Idempotency as documented: the same `Idempotency-Key` with the same body answers the first
 *   response again without a new delivery; with a different body → 409 invalid_idempotent_request.
 * - Failures by the recipient's `+tag@`: `daily-quota` (429 daily_quota_exceeded), `rate-limit`
 *   (429 rate_limit_exceeded, retry-after 2), `invalid` (422 invalid_to_address), `server-error`
 *   (500), `unknown-error` (422 with a `name` Resend has never documented), `lost-response-once`
 *   (the first request is delivered, then the connection is cut without an answer), `slow-once`
 *   (the first request is delivered, the answer comes 20 s later).
 * - `GET /_test/log` → `{requests: [{key, to, authorization, body}], deliveries: [{id, key, to}]}`.
 */
function startFakeResend() {
  const byKey = new Map();
  const requests = [];
  const deliveries = [];
  let nextId = 1;
  const server = createHttpServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const url = new URL(req.url, "http://fake");
      if (req.method === "GET" && url.pathname === "/_test/log") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ requests, deliveries }));
      }
      if (req.method !== "POST" || url.pathname !== "/emails") return resendError(res, 404, "not_found", "no such route");
      if (req.headers.authorization !== "Bearer test-resend-key") {
        return resendError(res, req.headers.authorization ? 403 : 401, req.headers.authorization ? "invalid_api_key" : "missing_api_key", "API key is invalid");
      }
      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        return resendError(res, 422, "validation_error", "body is not JSON");
      }
      const key = req.headers["idempotency-key"] ?? null;
      const to = Array.isArray(body.to) ? body.to[0] : body.to;
      requests.push({ key, to, authorization: req.headers.authorization, body });
      checkMarkup(`Resend to ${to} (${body.subject})`, body.html);
      for (const a of body.attachments ?? []) {
        if (isCalendarType(a.content_type)) {
          checkCalendar(`Resend to ${to} (${body.subject})`, Buffer.from(String(a.content ?? ""), "base64").toString("utf8"), a.content_type);
        }
      }
      const tag = /\+([a-z-]+)@/.exec(to ?? "")?.[1] ?? "";
      if (tag === "daily-quota") return resendError(res, 429, "daily_quota_exceeded", "You have reached your daily email sending quota.");
      if (tag === "rate-limit") return resendError(res, 429, "rate_limit_exceeded", "Too many requests.", { "retry-after": "2" });
      if (tag === "invalid") return resendError(res, 422, "invalid_to_address", "Invalid `to` field.");
      if (tag === "server-error") return resendError(res, 500, "internal_server_error", "Unexpected error.");
      if (tag === "unknown-error") return resendError(res, 422, "brand_new_error", "Something Resend added later.");
      if (key && byKey.has(key)) {
        const first = byKey.get(key);
        if (first.raw !== raw) return resendError(res, 409, "invalid_idempotent_request", "Same idempotency key used with a different request payload.");
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ id: first.id }));
      }
      const id = `re_fake_${nextId++}`;
      if (key) byKey.set(key, { raw, id });
      deliveries.push({ id, key, to });
      if (tag === "lost-response-once" && deliveries.filter((d) => d.to === to).length === 1) {
        return req.socket.destroy();
      }
      const answer = () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id }));
      };
      if (tag === "slow-once" && deliveries.filter((d) => d.to === to).length === 1) return setTimeout(answer, 20_000).unref();
      answer();
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/** An SMTP server that requires AUTH and accepts only `engine` / `right-password` (535 otherwise). */
async function startAuthSmtp() {
  const { SMTPServer } = await import("smtp-server");
  const server = new SMTPServer({
    authOptional: false,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === "engine" && auth.password === "right-password") return callback(null, { user: "engine" });
      const error = new Error("Authentication credentials invalid");
      error.responseCode = 535;
      return callback(error);
    },
    onData(stream, session, callback) {
      const chunks = [];
      stream.on("data", (c) => chunks.push(c));
      stream.on("end", () => {
        checkMime(`auth SMTP to ${session.envelope.rcptTo[0]?.address ?? "?"}`, Buffer.concat(chunks)).finally(() => callback());
      });
    },
  });
  const port = await freePort();
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { server, port };
}

export default async function setup(project) {
  const resend = await startFakeResend();
  project.provide("resendPort", resend.address().port);
  const authSmtp = await startAuthSmtp();
  project.provide("authSmtpPort", authSmtp.port);
  const stripe = await startFakeStripe();
  project.provide("stripePort", stripe.address().port);
  const receiver = await startWebhookReceiver();
  project.provide("webhookReceiverPort", receiver.address().port);
  const scripted = await startScriptedSmtp({ onMessage: (to, raw) => checkMime(`scripted SMTP to ${to}`, raw) });
  project.provide("scriptedSmtpPort", scripted.smtpPort);
  project.provide("scriptedSmtpControlPort", scripted.controlPort);
  const api = await startSupplierApi();
  project.provide("supplierApiPort", api.address().port);
  const smtpPort = await freePort();
  const webPort = await freePort();
  const calendarCheck = await startCalendarCheck(() => `http://127.0.0.1:${webPort}`);
  project.provide("calendarCheckPort", calendarCheck.address().port);
  const bin = join(process.cwd(), "node_modules", ".bin", "maildev");
  const child = spawn(bin, ["--smtp", String(smtpPort), "--web", String(webPort), "--ip", "127.0.0.1", "--web-ip", "127.0.0.1", "--silent"], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  // Before it answers, maildev exiting fails the set-up; during the run, it is reported (the tests
  // that read its mailbox then fail by name); once the teardown stops it, its exit code (maildev
  // exits 1 on SIGTERM) is nobody's failure.
  let phase = "starting";
  const exited = new Promise((_, reject) =>
    child.on("exit", (code, signal) => {
      if (phase === "starting") reject(new Error(`maildev exited with ${code ?? signal} before it answered`));
      else if (phase === "running") process.stderr.write(`maildev exited with ${code ?? signal} during the run\n`);
    }),
  );
  await Promise.race([waitForHttp(`http://127.0.0.1:${webPort}/api/email`, 30_000), exited]);
  phase = "running";
  project.provide("maildevSmtpPort", smtpPort);
  project.provide("maildevWebPort", webPort);
  return async () => {
    phase = "stopping";
    child.kill("SIGTERM");
    api.close();
    resend.close();
    stripe.close();
    receiver.close();
    authSmtp.server.close();
    scripted.close();
    calendarCheck.close();
  };
}
