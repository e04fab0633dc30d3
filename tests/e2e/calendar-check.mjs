// The check every calendar part of the end-to-end runs goes through, wherever it was caught (the
// wrapped send_email binding, the fake Resend API, the SMTP servers): parsed with ical.js
// (Mozilla's RFC 5545 parser, the one Thunderbird uses) and held to what the engine promises of
// each part: one VCALENDAR with a METHOD equal to the MIME type's `method=`, at least one VEVENT,
// and in each VEVENT a UID, DTSTAMP, SEQUENCE and DTSTART. Runs in workerd (the setup file
// tests/e2e/calendars-parse.mjs) and in Node (tests/e2e/global-setup.mjs).
import ICAL from "ical.js";

/**
 * What is wrong with one calendar part; an empty list when nothing is.
 * @param {string} ics the part's text
 * @param {string} [contentType] its MIME type (`text/calendar; charset=utf-8; method=PUBLISH`),
 *   when known: its `method=` must be the object's METHOD
 * @returns {string[]}
 */
export function calendarProblems(ics, contentType) {
  let comp;
  try {
    comp = new ICAL.Component(ICAL.parse(ics));
  } catch (e) {
    return [`ical.js cannot parse it: ${e?.message ?? e}`];
  }
  const problems = [];
  if (comp.name !== "vcalendar") problems.push(`the object is ${comp.name}, not VCALENDAR`);
  const method = comp.getFirstPropertyValue("method");
  if (!method) problems.push("no METHOD");
  const typeMethod = /method=([A-Za-z-]+)/i.exec(contentType ?? "")?.[1];
  if (contentType !== undefined && typeMethod?.toUpperCase() !== String(method ?? "").toUpperCase()) {
    problems.push(`the MIME type says method=${typeMethod ?? "(none)"}, the object METHOD:${method ?? "(none)"}`);
  }
  const events = comp.getAllSubcomponents("vevent");
  if (events.length === 0) problems.push("no VEVENT");
  events.forEach((event, i) => {
    for (const name of ["uid", "dtstamp", "sequence", "dtstart"]) {
      const value = event.getFirstPropertyValue(name);
      if (value === null || value === undefined || value === "") problems.push(`VEVENT ${i + 1} has no ${name.toUpperCase()}`);
    }
  });
  return problems;
}

/** Whether a MIME type names a calendar part. */
export function isCalendarType(type) {
  return typeof type === "string" && type.toLowerCase().startsWith("text/calendar");
}
