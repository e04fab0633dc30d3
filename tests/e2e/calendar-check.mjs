// The check every calendar part and every reservation markup block of the end-to-end runs goes
// through, wherever it was caught (the wrapped send_email binding, the fake Resend API, the SMTP
// servers), in Node (tests/e2e/global-setup.mjs; the workerd side hands its catch over,
// tests/e2e/calendars-parse.mjs):
// - each calendar part is read by two independent parsers, ical.js (Mozilla's RFC 5545 parser,
//   the one Thunderbird uses) and node-ical (a separate parser of its own, built on the `ical`
//   grammar), which must both read it and agree on its UID, SEQUENCE, METHOD, ORGANIZER, DTSTAMP,
//   start and end; and it is held to what the engine promises of each part as calendar clients
//   apply iTIP (RFC 5546): one VCALENDAR, a METHOD equal to the MIME type's `method=`, exactly one
//   VEVENT with UID, DTSTAMP, SEQUENCE, DTSTART and an ORGANIZER `mailto:`; no ATTENDEE in a
//   PUBLISH and none asked to RSVP; STATUS CONFIRMED with PUBLISH and CANCELLED with CANCEL; an
//   end, when there is one, of the same kind as the start (dates, UTC or floating) and after it;
// - each `<script type="application/ld+json">` block of an HTML part is JSON that
//   tests/e2e/reservation-markup.schema.json accepts (the properties Gmail's reservation pages
//   mark required).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ICAL from "ical.js";
import nodeIcal from "node-ical";
import Ajv from "ajv";

const schema = JSON.parse(readFileSync(join(import.meta.dirname, "reservation-markup.schema.json"), "utf8"));
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

/** An ical.js time as one comparable form: `date:YYYY-MM-DD`, `utc:<ms>` or `floating:<text>`. */
function icaljsTime(t) {
  if (!t) return null;
  if (t.isDate) return `date:${t.toString()}`;
  if (t.zone?.tzid === "UTC") return `utc:${t.toUnixTime() * 1000}`;
  return `floating:${t.toString().replace("Z", "")}`;
}

/** A node-ical time as the same form (node-ical marks dates `dateOnly`, UTC `tz: "Etc/UTC"`). */
function nodeIcalTime(t) {
  if (!t) return null;
  const d = new Date(t);
  if (t.dateOnly) return `date:${[d.getFullYear(), d.getMonth() + 1, d.getDate()].map((n, i) => String(n).padStart(i ? 2 : 4, "0")).join("-")}`;
  if (t.tz === "Etc/UTC" || t.tz === "UTC" || t.tz === "Z") return `utc:${d.getTime()}`;
  // Floating: node-ical reads it as the machine's local time; write its wall-clock fields back.
  const p = (n) => String(n).padStart(2, "0");
  return `floating:${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** The organizer's address as `mailto:…` (node-ical gives a string or `{val, params}`). */
function mailto(v) {
  const s = typeof v === "string" ? v : v?.val;
  return typeof s === "string" ? s.replace(/^MAILTO:/i, "mailto:") : null;
}

/**
 * What both parsers read of one calendar part: `{icaljs, nodeical}`, each
 * `{method, events: [{uid, sequence, dtstamp, start, end, status, organizer, attendees}]}`, or
 * `{error}` when that parser could not read it.
 */
export function readBoth(ics) {
  const out = {};
  try {
    const comp = new ICAL.Component(ICAL.parse(ics));
    out.icaljs = {
      name: comp.name,
      method: comp.getFirstPropertyValue("method"),
      events: comp.getAllSubcomponents("vevent").map((v) => ({
        uid: v.getFirstPropertyValue("uid"),
        sequence: v.getFirstPropertyValue("sequence"),
        dtstamp: v.getFirstPropertyValue("dtstamp")?.toUnixTime?.() * 1000,
        start: icaljsTime(v.getFirstPropertyValue("dtstart")),
        end: icaljsTime(v.getFirstPropertyValue("dtend")),
        status: v.getFirstPropertyValue("status"),
        organizer: mailto(v.getFirstPropertyValue("organizer")),
        attendees: v.getAllProperties("attendee").map((a) => ({ value: mailto(a.getFirstValue()), rsvp: a.getParameter("rsvp") ?? null })),
      })),
    };
  } catch (e) {
    out.icaljs = { error: String(e?.message ?? e) };
  }
  try {
    const data = nodeIcal.sync.parseICS(ics);
    const events = Object.values(data).filter((c) => c?.type === "VEVENT");
    out.nodeical = {
      method: data.vcalendar?.method ?? null,
      events: events.map((v) => ({
        uid: v.uid,
        sequence: v.sequence === undefined ? null : Number(v.sequence),
        dtstamp: v.dtstamp ? new Date(v.dtstamp).getTime() : null,
        start: nodeIcalTime(v.start),
        // node-ical gives an event without DTEND its start as end (RFC 5545 §3.6.1: it ends
        // where it starts); read that as no end, as ical.js does.
        end: v.end && !/^DTEND[;:]/m.test(ics) && nodeIcalTime(v.end) === nodeIcalTime(v.start) ? null : nodeIcalTime(v.end),
        status: v.status ?? null,
        organizer: mailto(v.organizer),
        attendees: [v.attendee ?? []].flat().map((a) => ({ value: mailto(a), rsvp: a?.params?.RSVP ?? null })),
      })),
    };
  } catch (e) {
    out.nodeical = { error: String(e?.message ?? e) };
  }
  return out;
}

/**
 * What is wrong with one calendar part; an empty list when nothing is.
 * @param {string} ics the part's text
 * @param {string} [contentType] its MIME type (`text/calendar; charset=utf-8; method=PUBLISH`),
 *   when known: its `method=` must be the object's METHOD
 * @returns {string[]}
 */
export function calendarProblems(ics, contentType) {
  const { icaljs, nodeical } = readBoth(ics);
  const problems = [];
  if (icaljs.error) problems.push(`ical.js cannot parse it: ${icaljs.error}`);
  if (nodeical.error) problems.push(`node-ical cannot parse it: ${nodeical.error}`);
  if (problems.length) return problems;
  if (icaljs.name !== "vcalendar") problems.push(`the object is ${icaljs.name}, not VCALENDAR`);
  const method = String(icaljs.method ?? "").toUpperCase();
  if (!method) problems.push("no METHOD");
  const typeMethod = /method=([A-Za-z-]+)/i.exec(contentType ?? "")?.[1];
  if (contentType !== undefined && typeMethod?.toUpperCase() !== method) {
    problems.push(`the MIME type says method=${typeMethod ?? "(none)"}, the object METHOD:${method || "(none)"}`);
  }
  if (icaljs.events.length !== 1) problems.push(`${icaljs.events.length} VEVENTs, not one (one UID per calendar object)`);
  if (nodeical.events.length !== icaljs.events.length) problems.push(`node-ical reads ${nodeical.events.length} VEVENTs, ical.js ${icaljs.events.length}`);
  if (String(nodeical.method ?? method).toUpperCase() !== method) problems.push(`node-ical reads METHOD:${nodeical.method}, ical.js ${method}`);
  icaljs.events.forEach((e, i) => {
    const n = nodeical.events[i] ?? {};
    const at = `VEVENT ${i + 1}`;
    for (const name of ["uid", "dtstamp", "sequence", "start"]) {
      if (e[name] === null || e[name] === undefined || e[name] === "" || Number.isNaN(e[name])) problems.push(`${at} has no ${name === "start" ? "DTSTART" : name.toUpperCase()}`);
    }
    for (const name of ["uid", "sequence", "dtstamp", "start", "end", "organizer"]) {
      if (n[name] !== e[name]) problems.push(`${at}: the parsers disagree on ${name}: ical.js ${JSON.stringify(e[name])}, node-ical ${JSON.stringify(n[name])}`);
    }
    if (!/^mailto:[^@\s]+@[^@\s]+$/.test(e.organizer ?? "")) problems.push(`${at} has no ORGANIZER mailto: (${e.organizer})`);
    if (method === "PUBLISH" && e.attendees.length) problems.push(`${at}: an ATTENDEE in a PUBLISH`);
    if (e.attendees.some((a) => String(a.rsvp).toUpperCase() === "TRUE")) problems.push(`${at}: an ATTENDEE asked to RSVP`);
    const status = String(e.status ?? "").toUpperCase();
    if (method === "PUBLISH" && status !== "CONFIRMED") problems.push(`${at}: STATUS ${status} in a PUBLISH`);
    if (method === "CANCEL" && status !== "CANCELLED") problems.push(`${at}: STATUS ${status} in a CANCEL`);
    if (e.end) {
      const [sk, sv] = e.start.split(/:(.*)/s);
      const [ek, ev] = e.end.split(/:(.*)/s);
      if (sk !== ek) problems.push(`${at}: a ${sk} start with a ${ek} end`);
      else if (!(sk === "utc" ? Number(ev) > Number(sv) : ev > sv)) problems.push(`${at}: the end ${e.end} is not after the start ${e.start}`);
    }
  });
  return problems;
}

/** The reservation markup blocks of an HTML part: the text of each JSON-LD script. */
export function markupBlocks(html) {
  return [...String(html ?? "").matchAll(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/g)].map((m) => m[1]);
}

/** What is wrong with the reservation markup of one HTML part; empty when nothing is (or none). */
export function markupProblems(html) {
  const problems = [];
  for (const block of markupBlocks(html)) {
    let data;
    try {
      data = JSON.parse(block);
    } catch (e) {
      problems.push(`a JSON-LD block is not JSON: ${e?.message ?? e}`);
      continue;
    }
    if (!validate(data)) {
      problems.push(`a JSON-LD block misses what Gmail requires: ${validate.errors.map((e) => `${e.instancePath || "/"} ${e.message}`).slice(0, 6).join("; ")}`);
    }
  }
  return problems;
}

/** Whether a MIME type names a calendar part. */
export function isCalendarType(type) {
  return typeof type === "string" && type.toLowerCase().startsWith("text/calendar");
}
