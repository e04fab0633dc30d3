import { WorkerEntrypoint } from "cloudflare:workers";

// A wrapped `send_email` binding for tests: the real local binding, plus failures on command.
// A recipient like `guest+daily-limit@example.com` makes the call throw the error Cloudflare Email
// Service throws (an Error whose `code` is E_DAILY_LIMIT_EXCEEDED), so the outbox's failover is
// exercised without mocks in the engine's code. Other commands:
// - `+fail-N@`: the first N sends to that address throw E_INTERNAL_SERVER_ERROR, later ones go;
// - `+hang-once@`: the first send is handed to the real binding (accepted) and then never answers
//   for 30 s, so a test can kill the outbox between "accepted" and "recorded".
// `accepted(address)` tells a test how many sends to an address the real binding accepted.
// Every calendar part (text/calendar attachment) of every message is kept until
// `takeCalendars()` hands it over, and every HTML part with reservation markup until
// `takeMarkup()`: the setup file every e2e configuration loads (tests/e2e/calendars-parse.mjs)
// has each checked in Node after each test file.
const FAULTS = {
  "daily-limit": "E_DAILY_LIMIT_EXCEEDED",
  "rate-limit": "E_RATE_LIMIT_EXCEEDED",
  suppressed: "E_RECIPIENT_SUPPRESSED",
  internal: "E_INTERNAL_SERVER_ERROR",
  "sender-not-verified": "E_SENDER_NOT_VERIFIED",
  // A code the engine does not know (the service may add codes at any time).
  "unknown-code": "E_SOMETHING_NEW_FROM_THE_SERVICE",
};

/** Per-address counts: calls seen and sends accepted by the real binding (module state). */
const calls = new Map();
const accepted = new Map();
/** The last message handed to the binding per address: what the provider got. */
const last = new Map();
/** Every message handed to the binding per address, in order: subject, text and attachments. */
const all = new Map();
/** Calendar parts not yet handed to `takeCalendars()`: `{to, subject, type, content}`. */
const calendars = [];
/** HTML parts with reservation markup not yet handed to `takeMarkup()`: `{to, subject, html}`. */
const markup = [];

/** An attachment's content as text (the binding takes a string or bytes). */
function contentText(content) {
  if (typeof content === "string") return content;
  if (content instanceof ArrayBuffer) return new TextDecoder().decode(content);
  if (ArrayBuffer.isView(content)) return new TextDecoder().decode(content);
  return String(content ?? "");
}

function addressOf(to) {
  const first = Array.isArray(to) ? to[0] : to;
  return (typeof first === "string" ? first : first?.email ?? "").toLowerCase();
}

function fail(code) {
  const error = new Error(`${code}: injected by the test harness`);
  error.code = code;
  throw error;
}

export class EmailWithFaults extends WorkerEntrypoint {
  async send(message) {
    const address = addressOf(message.to);
    const n = (calls.get(address) ?? 0) + 1;
    calls.set(address, n);
    last.set(address, { subject: message.subject, headers: message.headers ?? null, replyTo: message.replyTo ?? null });
    const attachments = (message.attachments ?? []).map((a) => ({
      filename: a.filename,
      type: a.type,
      disposition: a.disposition,
      content: contentText(a.content),
    }));
    all.set(address, [...(all.get(address) ?? []), { subject: message.subject, text: message.text, html: message.html, attachments }]);
    if (typeof message.html === "string" && message.html.includes("application/ld+json")) {
      markup.push({ to: address, subject: message.subject, html: message.html });
    }
    for (const a of attachments) {
      if (typeof a.type === "string" && a.type.toLowerCase().startsWith("text/calendar")) {
        calendars.push({ to: address, subject: message.subject, type: a.type, content: a.content });
      }
    }
    const command = /\+([a-z0-9-]+)@/.exec(address)?.[1] ?? "";
    if (FAULTS[command]) fail(FAULTS[command]);
    const failFirst = /^fail-(\d+)$/.exec(command);
    if (failFirst && n <= Number(failFirst[1])) fail("E_INTERNAL_SERVER_ERROR");
    const result = await this.env.REAL_EMAIL.send(message);
    accepted.set(address, (accepted.get(address) ?? 0) + 1);
    if (command === "hang-once" && n === 1) {
      await new Promise((resolve) => setTimeout(resolve, 30_000));
    }
    return { messageId: result.messageId };
  }

  /** The subject, extra headers and `replyTo` of the last message to `address`, as the binding got them. */
  async lastMessage(address) {
    return last.get(address.toLowerCase()) ?? null;
  }

  /** Every message handed to the binding for `address`, in order (subject, text, html, attachments). */
  async messages(address) {
    return all.get(address.toLowerCase()) ?? [];
  }

  /** The calendar parts seen since the last call (every recipient), and forgets them. */
  async takeCalendars() {
    return calendars.splice(0);
  }

  /** The HTML parts with reservation markup seen since the last call, and forgets them. */
  async takeMarkup() {
    return markup.splice(0);
  }

  /** How many sends to `address` the real binding accepted (and how many calls were made). */
  async accepted(address) {
    const a = address.toLowerCase();
    return { accepted: accepted.get(a) ?? 0, calls: calls.get(a) ?? 0 };
  }
}

export default {
  fetch() {
    return new Response("email-with-faults: RPC only", { status: 404 });
  },
};
