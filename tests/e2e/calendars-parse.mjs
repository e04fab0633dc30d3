// After each end-to-end test file (loaded by every configuration through
// tests/e2e/engine-config.mjs): every calendar part and every reservation markup block that went
// out while it ran is checked in Node by tests/e2e/calendar-check.mjs (two calendar parsers,
// ical.js and node-ical; the markup against the properties Gmail requires), wherever it went:
// - through the wrapped send_email binding (tests/e2e/email-with-faults.mjs keeps each
//   text/calendar attachment and each HTML part with markup until `takeCalendars()` /
//   `takeMarkup()`), handed to the Node check here;
// - to the fake Resend API, the SMTP servers or maildev, checked in Node by
//   tests/e2e/global-setup.mjs as they arrive.
// A part or block that fails any check fails the file.
import { env } from "cloudflare:test";
import { afterAll, expect } from "vitest";

afterAll(async () => {
  const body = { calendars: await env.EMAIL.takeCalendars(), html: await env.EMAIL.takeMarkup() };
  const r = await fetch(`${env.CALENDAR_CHECK_API}/_test/calendars`, { method: "POST", body: JSON.stringify(body) });
  expect(r.status, "the calendar check answers").toBe(200);
  const { problems } = await r.json();
  expect(problems, "every calendar part reads the same in ical.js and node-ical and keeps the engine's iTIP promises; every reservation markup block has what Gmail requires").toEqual([]);
});
