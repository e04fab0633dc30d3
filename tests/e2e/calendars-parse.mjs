// After each end-to-end test file (loaded by every configuration through
// tests/e2e/engine-config.mjs): every calendar part that went out while it ran is parsed with
// ical.js and held to the invariants of tests/e2e/calendar-check.mjs, wherever it went:
// - through the wrapped send_email binding (tests/e2e/email-with-faults.mjs keeps each
//   text/calendar attachment until `takeCalendars()`), checked here in workerd;
// - to the fake Resend API, the SMTP servers or maildev, checked in Node by
//   tests/e2e/global-setup.mjs, whose problems `GET /_test/calendars` hands over.
// A part that does not parse or misses METHOD, UID, DTSTAMP, SEQUENCE or DTSTART fails the file.
import { env } from "cloudflare:test";
import { afterAll, expect } from "vitest";
import { calendarProblems } from "./calendar-check.mjs";

afterAll(async () => {
  const problems = [];
  for (const c of await env.EMAIL.takeCalendars()) {
    for (const p of calendarProblems(c.content, c.type)) problems.push(`send_email to ${c.to} (${c.subject}): ${p}`);
  }
  const r = await fetch(`${env.CALENDAR_CHECK_API}/_test/calendars`);
  expect(r.status, "the calendar check answers").toBe(200);
  problems.push(...(await r.json()).problems);
  expect(problems, "every calendar part parses with ical.js and carries METHOD, UID, DTSTAMP, SEQUENCE, DTSTART").toEqual([]);
});
