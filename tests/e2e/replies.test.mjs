// Guests' replies inside workerd: a booking's confirmation carries its reply address; messages
// are handed to the Worker's real `email()` handler as Email Routing hands them (a
// ForwardableEmailMessage: envelope, raw stream, setReject); the owner's answer goes through the
// admin form and the outbox. (The same paths through `wrangler dev`'s /cdn-cgi/handler/email:
// tests/browser/admin.browser.mjs.)
import { env, SELF } from "cloudflare:test";
import { describe, it, expect, beforeAll } from "vitest";
import gmailReply from "../fixtures/inbound/gmail-reply.eml?raw";
import outOfOffice from "../fixtures/inbound/out-of-office.eml?raw";
import deliveryReport from "../fixtures/inbound/delivery-report.eml?raw";
import malformed from "../fixtures/inbound/malformed.eml?raw";
import {
  adminCookie, adminPage, book, deliverInbound, outboxState, rows, runOutbox, sendThrough, smtpInbox, unique,
  eventually,
} from "./helpers.mjs";
import { replyAddress as replyAddressFor } from "./payloads.mjs";

const DOMAIN = "reply.engine.test";
const KEY = "test-reply-signing-key-0123456789abcdef";
const FIXTURES = { "gmail-reply.eml": gmailReply, "out-of-office.eml": outOfOffice, "delivery-report.eml": deliveryReport, "malformed.eml": malformed };
const fixture = (name) => FIXTURES[name];

// A reply address the engine never issued (an expired one), rebuilt from its documented format.
const replyAddress = (dedupeKey, bookingId, issuedMs) => replyAddressFor(dedupeKey, bookingId, issuedMs, { key: KEY, domain: DOMAIN });

async function messages(where, ...binds) {
  return rows(`SELECT * FROM inbound_messages WHERE ${where} ORDER BY id`, ...binds);
}

async function ownerAlertKeys() {
  return (await outboxState()).items.map((i) => i.dedupe_key).filter((k) => k.startsWith("owner_guest_message:"));
}

describe("guests' replies", () => {
  let b;
  let confirmationKey;
  let replyTo;

  beforeAll(async () => {
    b = await book({ email: `${unique("ana")}@example.com` });
    confirmationKey = `booking_confirmation:${b.bookingId}`;
    await sendThrough(confirmationKey);
    const [row] = await rows("SELECT to_addr FROM emails WHERE dedupe_key = ?", confirmationKey);
    replyTo = (await env.EMAIL.lastMessage(row.to_addr))?.replyTo?.email;
  });

  it("a booking's confirmation carries its own reply address, signed, and says it is automatic", async () => {
    expect(replyTo).toMatch(/^reply\+[a-z2-7]{44}@reply\.engine\.test$/);
    expect(replyTo.split("@")[0].length).toBeLessThanOrEqual(64);
    expect(replyTo).toBe(await replyAddress(confirmationKey, b.bookingId, (await rows("SELECT created_at_ms FROM reply_addresses WHERE dedupe_key = ?", confirmationKey))[0].created_at_ms));
    const [guest] = await rows("SELECT contact_email FROM bookings WHERE booking_id = ?", b.bookingId);
    const sent = await env.EMAIL.lastMessage(guest.contact_email);
    expect(sent.replyTo).toEqual({ name: "Example Trips", email: replyTo });
    expect(sent.headers).toMatchObject({ "Auto-Submitted": "auto-generated" });
    const owner = await env.EMAIL.lastMessage("owner@example.com");
    expect(owner.replyTo).toBeNull();
  });

  it("a guest's reply lands on the booking without its quoted history and the owner is alerted at once with the words", async () => {
    const raw = fixture("gmail-reply.eml").replaceAll("reply+TOKEN@reply.example.com", replyTo);
    // Some servers lower-case or upper-case the local part: the token reads back either way.
    const m = await deliverInbound("ana.garcia@gmail.com", replyTo.toUpperCase(), raw);
    expect(m.rejected).toBeNull();
    const [kept] = await messages("booking_id = ?", b.bookingId);
    expect(kept).toMatchObject({ kind: "guest", answers_key: confirmationKey, alerted: 1, from_addr: "ana.garcia@gmail.com", thread_ours: 0 });
    expect(kept.text_body).toBe("Hola! Can we check in early, around 11:00? We land at 8.\n\nGracias,\nAna");
    const key = `owner_guest_message:${kept.id}`;
    expect(await ownerAlertKeys()).toContain(key);
    await runOutbox();
    const alert = (await env.EMAIL.messages("owner@example.com")).find((x) => x.subject.includes(`about ${b.bookingId}`));
    expect(alert.text).toContain("Can we check in early, around 11:00?");
    expect(alert.text).toContain(`https://engine.test/admin/booking?id=${b.bookingId}#conversation`);
    expect(alert.text).not.toContain("> Your stay");
    // A redelivery of the same message (the sending server retried) changes nothing.
    await deliverInbound("ana.garcia@gmail.com", replyTo, raw);
    expect(await messages("booking_id = ?", b.bookingId)).toHaveLength(1);
    expect((await ownerAlertKeys()).filter((k) => k === key)).toHaveLength(1);
    const waiting = await adminPage("/admin/conversations", await adminCookie());
    expect(waiting).toContain(b.bookingId);
  });

  it("the owner answers from the booking's page: a guest email through the outbox, threaded on the guest's message", async () => {
    const cookie = await adminCookie();
    const page = await adminPage(`/admin/booking?id=${encodeURIComponent(b.bookingId)}`, cookie);
    expect(page).toContain("Can we check in early, around 11:00?");
    expect(page).toContain('id="answer"');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)[1];
    const formId = /name="form_id" value="([^"]+)"/.exec(page)[1];
    const post = () =>
      SELF.fetch("https://engine.test/admin/booking/answer", {
        method: "POST",
        redirect: "manual",
        headers: { cookie, origin: "https://engine.test", "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrf, id: b.bookingId, form_id: formId, text: "Of course, early check-in from 11:00 is arranged.\nSee you soon!" }),
      });
    const r = await post();
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toContain("done=answered");
    // A second submit of the same form sends nothing more.
    expect((await post()).status).toBe(303);
    const key = `conversation_answer:${b.bookingId}:${formId}`;
    expect(await rows("SELECT dedupe_key FROM emails WHERE kind = 'conversation_answer' AND booking_id = ?", b.bookingId)).toEqual([{ dedupe_key: key }]);
    const state = await sendThrough(key);
    expect(state.items.find((i) => i.dedupe_key === key)).toMatchObject({ status: "sent", rank: 1 });
    const [guest] = await rows("SELECT contact_email FROM bookings WHERE booking_id = ?", b.bookingId);
    const sent = await env.EMAIL.lastMessage(guest.contact_email);
    expect(sent.subject).toBe("Re: Your stay at Hôtel Harbour is confirmed");
    expect(sent.headers["In-Reply-To"]).toBe("<CAF3xYz+r8=Qm1w@mail.gmail.com>");
    expect(sent.headers.References).toBe("<booking_confirmation.bk-1@mail.example.com> <CAF3xYz+r8=Qm1w@mail.gmail.com>");
    expect(sent.headers["Auto-Submitted"]).toBeUndefined();
    expect(sent.replyTo.email).toMatch(/^reply\+[a-z2-7]{44}@reply\.engine\.test$/);
    expect(sent.replyTo.email).not.toBe(replyTo);
    const text = (await env.EMAIL.messages(guest.contact_email)).at(-1).text;
    expect(text).toContain("Of course, early check-in from 11:00 is arranged.\nSee you soon!");
    expect(text).toContain(`Your booking ${b.bookingId}`);
    const after = await adminPage(`/admin/booking?id=${encodeURIComponent(b.bookingId)}`, cookie);
    expect(after).toContain("your answer to the guest");
    expect(await adminPage("/admin/conversations", cookie)).not.toContain(`>${b.bookingId}<`);
    // The guest answers the answer: the thread continues on the same booking.
    const again = await deliverInbound(guest.contact_email, sent.replyTo.email, `From: ${guest.contact_email}\r\nSubject: Re: Re: stay\r\nMessage-ID: <second@example.com>\r\n\r\nThank you!\r\n`);
    expect(again.rejected).toBeNull();
    const [, second] = await messages("booking_id = ?", b.bookingId);
    expect(second).toMatchObject({ kind: "guest", answers_key: key, text_body: "Thank you!" });
  });

  it("an out-of-office answer and a delivery report are kept on the booking and alert nobody", async () => {
    const before = await ownerAlertKeys();
    await deliverInbound("jan.devries@outlook.com", replyTo, fixture("out-of-office.eml").replaceAll("reply+TOKEN@reply.example.com", replyTo));
    await deliverInbound("", replyTo, fixture("delivery-report.eml").replaceAll("reply+TOKEN@reply.example.com", replyTo));
    const auto = await messages("booking_id = ? AND kind = 'auto'", b.bookingId);
    expect(auto.map((m) => m.auto_kind)).toEqual(["auto_reply", "delivery_report"]);
    expect(auto.every((m) => m.alerted === 0)).toBe(true);
    expect(await ownerAlertKeys()).toEqual(before);
    const [conversation] = await rows("SELECT waiting FROM conversations WHERE booking_id = ?", b.bookingId);
    expect(conversation.waiting).toBe(1); // the guest's "Thank you!" still waits; the robots add nothing
  });

  it("a tampered token, an expired one and a plain address never touch a booking", async () => {
    const before = await ownerAlertKeys();
    const at = replyTo.indexOf("@") - 3;
    const tampered = replyTo.slice(0, at) + (replyTo[at] === "a" ? "b" : "a") + replyTo.slice(at + 1);
    const expired = await replyAddress(confirmationKey, b.bookingId, Date.now() - 401 * 86_400_000);
    const cases = [
      [tampered, "signature does not match"],
      [expired, "expired"],
      [`bookings@${DOMAIN}`, "not a reply address"],
    ];
    for (const [to, reason] of cases) {
      const raw = fixture("gmail-reply.eml").replaceAll("reply+TOKEN@reply.example.com", to).replace("CAF3xYz", unique("m"));
      const m = await deliverInbound("ana.garcia@gmail.com", to, raw);
      expect(m.rejected).toBeNull();
      const [kept] = await messages("envelope_to = ?", to);
      expect(kept).toMatchObject({ kind: "unmatched", booking_id: null, alerted: 0 });
      expect(kept.reason).toContain(reason);
    }
    expect(await messages("booking_id = ? AND kind = 'guest'", b.bookingId)).toHaveLength(2);
    expect(await ownerAlertKeys()).toEqual(before);
    const page = await adminPage("/admin/conversations", await adminCookie());
    expect(page).toContain("signature does not match");
    expect(page).toContain(`bookings@${DOMAIN}`);
  });

  it("a 10 MiB message is read in part and kept with the guest's words; a malformed one is kept as far as it reads", async () => {
    let raw = `From: Ana <ana.garcia@gmail.com>\r\nTo: ${replyTo}\r\nSubject: photos\r\nMessage-ID: <big@example.com>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHere are the photos of the damaged suitcase.\r\n--b\r\nContent-Type: image/jpeg; name=one.jpg\r\nContent-Transfer-Encoding: base64\r\n\r\n`;
    const line = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=".repeat(2) + "\r\n";
    raw += line.repeat(Math.ceil((10 * 1024 * 1024) / line.length)) + "--b--\r\n";
    const big = await deliverInbound("ana.garcia@gmail.com", replyTo, raw);
    expect(big.rejected).toBeNull();
    const [kept] = await messages("message_id = 'big@example.com'");
    expect(kept).toMatchObject({ kind: "guest", booking_id: b.bookingId, text_body: "Here are the photos of the damaged suitcase." });
    expect(kept.raw_size).toBeGreaterThan(10 * 1024 * 1024);
    expect(kept.note).toContain("only the first 4194304 of");
    expect(JSON.parse(kept.attachments_json).listed[0]).toMatchObject({ name: "one.jpg", content_type: "image/jpeg" });
    const broken = fixture("malformed.eml").replaceAll("reply+TOKEN@reply.example.com", replyTo);
    expect((await deliverInbound("guest@example.com", replyTo, broken)).rejected).toBeNull();
    const [odd] = await messages("subject = 'broken'");
    expect(odd).toMatchObject({ kind: "guest", booking_id: b.bookingId });
    expect(odd.text_body).toContain("Hello, we will be late.");
    const junk = await deliverInbound("x@example.com", replyTo, new Uint8Array([0, 1, 255, 32, 110, 111, 32, 104, 101, 97, 100, 101, 114, 115]));
    expect(junk.rejected).toBeNull();
    const [unreadable] = await messages("note LIKE '%not readable as MIME%'");
    expect(unreadable).toMatchObject({ booking_id: b.bookingId, kind: "guest" });
  });

  it("past the day's bound of unmatched mail, more is refused back to the sender with the reason", async () => {
    const today = new Date().toISOString().slice(0, 10);
    let kept = (await rows("SELECT COUNT(*) AS n FROM inbound_messages WHERE kind = 'unmatched' AND received_day = ?", today))[0].n;
    while (kept < 6) {
      const m = await deliverInbound("spam@example.net", `nobody+${unique("x")}@${DOMAIN}`, `From: spam@example.net\r\nSubject: hi\r\nMessage-ID: <${unique("s")}@x>\r\n\r\nbuy\r\n`);
      expect(m.rejected).toBeNull();
      kept += 1;
    }
    const refused = await deliverInbound("spam@example.net", `nobody@${DOMAIN}`, "From: spam@example.net\r\nSubject: hi\r\nMessage-ID: <one-too-many@x>\r\n\r\nbuy\r\n");
    expect(refused.rejected).toMatch(/^not delivered: not a reply address and this address takes no more unmatched mail today$/);
    expect(await messages("message_id = 'one-too-many@x'")).toHaveLength(0);
  });

  it("over SMTP too, a guest email names its reply address and says it is automatic", async () => {
    const email = `${unique("smtp")}+daily-limit@example.com`;
    const failover = await book({ email });
    const key = `booking_confirmation:${failover.bookingId}`;
    await sendThrough(key);
    const mail = await eventually(async () => {
      const found = (await smtpInbox()).find((x) => x.to?.some((t) => t.address === email));
      if (!found) throw new Error("not in the SMTP inbox yet");
      return found;
    });
    expect(mail.headers["auto-submitted"], JSON.stringify(mail.headers)).toBe("auto-generated");
    // maildev's JSON leaves address headers out; the message as it arrived has them.
    const source = await (await fetch(`${env.MAILDEV_API}/api/email/${mail.id}/source`)).text();
    // (a long header is folded onto a second line, RFC 5322 §2.2.3)
    expect(source).toMatch(/^Reply-To: "Example Trips"\s+<reply\+[a-z2-7]{44}@reply\.engine\.test>\r?$/m);
  });
});
