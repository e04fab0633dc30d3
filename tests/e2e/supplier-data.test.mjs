// Supplier data is data, inside workerd: odd confirmation numbers and hotel names
// never break a journey or a header, a huge unauthenticated body is refused without being read,
// unknown methods are 405, and a stay already over gets no guest confirmation.
import { env, introspectWorkflowInstance, SELF } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { futureBooking, instanceIdFor, liteapiEvent, postLiteapi, rows, runLiteapi, sendThrough, unique }
  from "./helpers.mjs";

/** `futureBooking` with the hotel's name replaced. */
function bookingAt(hotelName, options = {}) {
  const d = futureBooking(options);
  const envelope = JSON.parse(d.body);
  const response = JSON.parse(envelope.response);
  response.data.hotel.name = hotelName;
  envelope.response = JSON.stringify(response);
  return { ...d, body: JSON.stringify(envelope) };
}

/** A body of `total` bytes without a content-length (chunked), counting what the reader pulled. */
function hugeStream(total, chunk = 64 * 1024) {
  const counter = { pulled: 0 };
  const bytes = new Uint8Array(chunk).fill(0x61);
  const stream = new ReadableStream({
    pull(controller) {
      if (counter.pulled >= total) return controller.close();
      counter.pulled += chunk;
      controller.enqueue(bytes);
    },
  });
  return { stream, counter };
}

describe("supplier data is data", () => {
  it("a 300-character and a multi-line confirmation number each give one HCN email and a completed journey", async () => {
    for (const number of ["H".repeat(300), "AB12\r\nCD34\n\tEF"]) {
      const d = futureBooking();
      await runLiteapi(d);
      const hcn = liteapiEvent("booking.book.hotelConfirmationNumber", { bookingId: d.bookingId, status: "CONFIRMED", hotelConfirmationCode: number });
      const out = await runLiteapi(hcn);
      expect(out.emails).toHaveLength(1);
      expect(out.emails[0][1]).toBe("enqueued");
      const sent = await rows("SELECT dedupe_key FROM emails WHERE booking_id = ? AND kind = 'hotel_confirmation_number'", d.bookingId);
      expect(sent).toHaveLength(1);
      const [{ hotel_confirmation_number: stored }] = await rows("SELECT hotel_confirmation_number FROM bookings WHERE booking_id = ?", d.bookingId);
      expect(stored).not.toMatch(/[\r\n\t]/);
      expect([...stored].length).toBeLessThanOrEqual(64);
      const [raw] = await rows("SELECT status, normalised FROM raw_events WHERE event_id = ?", hcn.eventId);
      expect(raw.status).toBe("started");
      expect(JSON.parse(raw.normalised)).toEqual([
        expect.objectContaining({ field: "event.hotel_confirmation_number", kind: "code" }),
      ]);
    }
  });

  it("a CR/LF hotel name gives a one-line subject, as the provider got it", async () => {
    const to = `${unique("crlf")}@example.com`;
    const d = bookingAt("Grand\r\nBcc: victim@evil.example\r\n\r\nHotel", { email: to });
    await runLiteapi(d);
    await sendThrough(`booking_confirmation:${d.bookingId}`);
    const got = await env.EMAIL.lastMessage(to);
    expect(got).not.toBeNull();
    expect(got.subject).not.toMatch(/[\r\n]/);
    expect(got.subject).toContain("Grand Bcc: victim@evil.example Hotel");
    expect([...got.subject].length).toBeLessThanOrEqual(200);
    const [{ subject }] = await rows("SELECT subject FROM emails WHERE dedupe_key = ?", `booking_confirmation:${d.bookingId}`);
    expect(subject).toBe(got.subject);
  });

  it("a chunked 50 MB body without credentials is refused without being read", async () => {
    const total = 50 * 1024 * 1024;
    // liteAPI authenticates with a header alone: refused before a byte of the body is read.
    {
      const { stream, counter } = hugeStream(total);
      const started = Date.now();
      const r = await SELF.fetch("https://engine.test/webhooks/liteapi", { method: "POST", body: stream, duplex: "half" });
      const ms = Date.now() - started;
      expect(r.status).toBe(401);
      console.log(`50 MB chunked to /webhooks/liteapi without a token: ${r.status} in ${ms} ms, ${counter.pulled} bytes pulled`);
      expect(counter.pulled).toBeLessThan(1024 * 1024);
      expect(ms).toBeLessThan(2_000);
    }
    // Duffel signs the body: read until the limit (64 KiB here), then 413.
    {
      const { stream, counter } = hugeStream(total);
      const started = Date.now();
      const r = await SELF.fetch("https://engine.test/webhooks/duffel", {
        method: "POST",
        body: stream,
        duplex: "half",
        headers: { "x-duffel-signature": "t=1,v1=00" },
      });
      const ms = Date.now() - started;
      expect(r.status).toBe(413);
      expect((await r.json()).error).toBe("payload_too_large");
      console.log(`50 MB chunked to /webhooks/duffel: ${r.status} in ${ms} ms, ${counter.pulled} bytes pulled`);
      expect(counter.pulled).toBeLessThan(2 * 1024 * 1024);
      expect(ms).toBeLessThan(2_000);
    }
  });

  it("unknown and unsupported methods answer 405 with Allow on every path", async () => {
    // workers-rs reads any method it does not know (PROPFIND, MKCOL, PURGE, …) as GET; the router
    // matches the method as sent. (workerd itself refuses names outside its HTTP method list.)
    const cases = [
      ["/health", "PROPFIND", "GET, HEAD"],
      ["/", "POST", "GET, HEAD"],
      ["/webhooks/liteapi", "MKCOL", "POST"],
      ["/webhooks/liteapi", "GET", "POST"],
      ["/webhooks/resend", "PUT", "POST"],
      ["/admin/outbox", "PURGE", "GET"],
      ["/admin/outbox/redrive", "GET", "POST"],
      ["/actions/abc", "DELETE", "GET, HEAD, POST"],
      ["/unsubscribe/abc", "PATCH", "GET, HEAD, POST"],
    ];
    for (const [path, method, allow] of cases) {
      const r = await SELF.fetch(`https://engine.test${path}`, { method });
      expect([path, method, r.status]).toEqual([path, method, 405]);
      expect(r.headers.get("allow")).toBe(allow);
      expect((await r.json()).error).toBe("method_not_allowed");
    }
    expect((await SELF.fetch("https://engine.test/nowhere", { method: "SEARCH" })).status).toBe(404);
  });

  it("a stay already over: booking recorded, owner alerted, no guest confirmation", async () => {
    const d = futureBooking({ checkinInDays: -10, nights: 3 });
    const out = await runLiteapi(d);
    expect(out.skipped).toContainEqual(["booking_confirmation", expect.stringMatching(/stay was over/)]);
    expect(await rows("SELECT booking_id FROM bookings WHERE booking_id = ?", d.bookingId)).toEqual([{ booking_id: d.bookingId }]);
    const emails = await rows("SELECT kind FROM emails WHERE booking_id = ? ORDER BY kind", d.bookingId);
    expect(emails.map((e) => e.kind)).toEqual(["owner_new_booking"]);
    // The owner's alert says so, and never that a confirmation is queued.
    const [alert] = await rows("SELECT text_body FROM email_contents WHERE dedupe_key = ?", `owner_new_booking:${d.bookingId}`);
    expect(alert.text_body).toContain("the guest is not written to");
    expect(alert.text_body).not.toContain("queued in the outbox");
    const plan = await rows("SELECT kind, status, reason FROM scheduled_sends WHERE booking_id = ? ORDER BY kind", d.bookingId);
    expect(plan.every((p) => p.status !== "planned")).toBe(true);
  });

  it("a journey that ends in a fatal error is marked errored and reaches the owner", async () => {
    // A confirmation number for a booking that never arrives: the step retries until its retries
    // are spent (delays disabled here), then the journey fails.
    const hcn = liteapiEvent("booking.book.hotelConfirmationNumber", { bookingId: unique("BK_never_"), status: "CONFIRMED", hotelConfirmationCode: "HCN-1" });
    const instance = await introspectWorkflowInstance(env.JOURNEY, instanceIdFor(hcn.eventId));
    try {
      await instance.modify(async (m) => { await m.disableSleeps(); await m.disableRetryDelays(); });
      expect((await postLiteapi(hcn.body)).status).toBe(202);
      await instance.waitForStatus("errored");
    } finally {
      await instance.dispose();
    }
    const [raw] = await rows("SELECT status, error FROM raw_events WHERE event_id = ?", hcn.eventId);
    expect(raw.status).toBe("errored");
    expect(raw.error).toMatch(/not known yet/);
    const alerts = await rows("SELECT kind, audience, subject FROM emails WHERE dedupe_key = ?", `owner_journey_failed:liteapi:${hcn.eventId}`);
    expect(alerts).toEqual([{ kind: "owner_journey_failed", audience: "owner", subject: "Booking event not processed: liteapi booking.book.hotelConfirmationNumber" }]);
  });
});
