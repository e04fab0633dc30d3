// `npm start` (after setup): builds, applies the D1 migrations locally, starts a local SMTP server
// with a web inbox (maildev) and `wrangler dev`, then prints where to look and how to post a sample
// webhook. Ctrl-C stops everything.
import { join } from "node:path";
import { createServer } from "node:net";
import { root, nodeBin, step, run, background, waitForHttp } from "./lib.mjs";

/** Resolves when `port` on 127.0.0.1 can be listened on; rejects naming the port otherwise. */
function portFree(port, what) {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (e) =>
      reject(new Error(`port ${port} (${what}) is in use (${e.code}): stop whatever holds it, or choose another port (see README "What runs locally")`)),
    );
    server.listen(port, "127.0.0.1", () => server.close(resolve));
  });
}

// Set up whatever is missing first (one Node process, so Ctrl-C / SIGTERM reach this script's own
// handlers and its children are stopped with it).
await import("./setup.mjs");

const ENGINE_PORT = Number(process.env.ENGINE_PORT ?? 8787);
const SMTP_PORT = 1025; // must match SMTP_PORT in .dev.vars
const INBOX_PORT = Number(process.env.INBOX_PORT ?? 1080);

await step("build", () => run("node", [join(root, "scripts", "build.mjs")]));
await step("apply D1 migrations locally", () =>
  run(join(nodeBin, "wrangler"), ["d1", "migrations", "apply", "DB", "--local"], { env: { ...process.env, PATH: `${nodeBin}:${process.env.PATH}`, CI: "true" } }),
);

const children = [];
function stopAll(code) {
  for (const c of children) c.kill("SIGTERM");
  process.exit(code);
}
process.on("SIGINT", () => stopAll(0));
process.on("SIGTERM", () => stopAll(0));
// `npm start` killed on its own (a process manager, `kill <npm pid>`) does not always pass the
// signal on: when this script's parent goes away, stop everything too.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stopAll(0);
}, 1000).unref();

// Checked before anything starts: another server on the port would answer /health and make the
// engine look started.
await step(`port ${ENGINE_PORT} is free for the engine`, () => portFree(ENGINE_PORT, "ENGINE_PORT"));

await step(`local SMTP server + web inbox (maildev, SMTP :${SMTP_PORT}, inbox :${INBOX_PORT})`, async () => {
  try {
    const r = await fetch(`http://127.0.0.1:${INBOX_PORT}/api/email`);
    if (r.ok) return "already running, reused";
  } catch {}
  const maildev = background("maildev", join(nodeBin, "maildev"), [
    "--smtp", String(SMTP_PORT), "--web", String(INBOX_PORT), "--ip", "127.0.0.1", "--web-ip", "127.0.0.1",
  ]);
  children.push(maildev);
  maildev.on("exit", (code) => {
    console.error(`maildev exited (${code}); stopping.`);
    stopAll(1);
  });
  await waitForHttp(`http://127.0.0.1:${INBOX_PORT}/api/email`, 30_000);
});

await step(`wrangler dev on :${ENGINE_PORT} (Worker, Workflow, Durable Object, D1, send_email — all local)`, async () => {
  // No Request.cf download: it needs the internet and only prints errors offline.
  const wrangler = background("wrangler", join(nodeBin, "wrangler"), [
    // --test-scheduled: `wrangler dev` runs no Cron Trigger on its own; this exposes
    // /__scheduled so one sweeper tick can be run by hand (printed below).
    "dev", "--ip", "127.0.0.1", "--port", String(ENGINE_PORT), "--test-scheduled",
  ], { CLOUDFLARE_CF_FETCH_ENABLED: "false" });
  children.push(wrangler);
  wrangler.on("exit", (code) => {
    console.error(`wrangler dev exited (${code}); stopping.`);
    stopAll(code || 1);
  });
  await waitForHttp(`http://127.0.0.1:${ENGINE_PORT}/health`, 180_000);
});

console.log(`
booking-email-engine is running.

  Engine          http://127.0.0.1:${ENGINE_PORT}   (POST /webhooks/liteapi)
  Admin           http://127.0.0.1:${ENGINE_PORT}/admin   (account admin, password dev-admin-password:
                  local only; make real accounts with npm run admin-password)
  Web inbox       http://127.0.0.1:${INBOX_PORT}   (mail sent by the SMTP failover)
  Main provider   the send_email binding writes each message under .wrangler/tmp/email/ and
                  wrangler logs "send_email binding called" with the file paths, below.

Post a sample liteAPI booking.book (a fresh event and booking id each time):

  ${ENGINE_PORT === 8787 ? "" : `ENGINE_PORT=${ENGINE_PORT} `}npm run sample

or the fixed fixture with curl (a second post of the same event answers "duplicate"; its stay,
June 2026, is over, so only the owner is told):

  curl -X POST http://127.0.0.1:${ENGINE_PORT}/webhooks/liteapi -H 'authorization: dev-liteapi-token' -H 'content-type: application/json' --data @tests/fixtures/liteapi-booking-confirmed.json

The owner's "new booking" alert is sent at once; the guest's confirmation within one outbox slot
(5–6 s locally, 150–160 s in production).

Run one sweeper tick (the Cron Trigger, every 5 minutes in production; its report is logged
below as "sweeper: {…}"):

  curl 'http://127.0.0.1:${ENGINE_PORT}/__scheduled?cron=*/5+*+*+*+*'

Ctrl-C stops everything.
`);
