// The order in which the outbox hands email to a provider, against the real queue (its SQLite and
// its SQL `ORDER BY`), observed at a real provider: the local SMTP server (maildev), which lists
// messages in the order it received them. Owner alerts go first (by rank, then age), then client
// email: urgent → booking → service → marketing, oldest first within a rank.
import { describe, it, expect } from "vitest";
import { item, outboxState, outboxStub, passClientGap, runOutbox, setOutboxState, smtpInbox, unique } from "./helpers.mjs";

const DAY_MS = 86_400_000;

const KIND = { owner: "owner_new_booking", urgent: "checkin_day", booking: "booking_confirmation", service: "thank_you", marketing: "marketing" };

/** Enqueues one email straight into the outbox; returns its dedupe key and address. */
async function enqueue(marker, label, audience, rank) {
  const kind = audience === "owner" ? KIND.owner : KIND[rank];
  const to = `${marker}-${label}@example.com`;
  const bookingId = unique("BK_");
  const email = {
    dedupeKey: `${kind}:${bookingId}:${label}`,
    kind,
    audience,
    rank,
    bookingId: rank === "marketing" ? null : bookingId,
    to,
    subject: `Order check ${label}`,
    text: `Hello, this is ${label}.`,
    html: `<p>Hello, this is ${label}.</p>`,
    messageId: `<${bookingId.toLowerCase()}.${label}@example.com>`,
  };
  const r = await outboxStub().fetch("https://outbox/enqueue", { method: "POST", body: JSON.stringify(email) });
  expect(await r.json()).toEqual({ status: "queued" });
  return { label, key: email.dedupeKey, to };
}

describe("outbox order", () => {
  it("hands owner alerts first, then client email by rank (urgent → booking → service → marketing), then age", async () => {
    // Hold every provider while the queue fills (the runtime may fire the alarm on its own), so
    // the order below is the queue's, not the order of arrival.
    await outboxState(); // creates the outbox's tables
    const far = Date.now() + 10 * DAY_MS;
    await setOutboxState("main_paused_until_ms", far);
    await setOutboxState("smtp_paused_until_ms", far);
    // The owner route would carry owner alerts while every guest route is paused: held too.
    await setOutboxState("owner_route_paused_until_ms", far);

    const marker = unique("order");
    // Arrival order (seq) deliberately unlike the expected send order.
    const queued = [];
    for (const [label, audience, rank] of [
      ["marketing-old", "client", "marketing"],
      ["service-old", "client", "service"],
      ["booking-old", "client", "booking"],
      ["owner-booking", "owner", "booking"],
      ["urgent", "client", "urgent"],
      ["booking-young", "client", "booking"],
      ["marketing-young", "client", "marketing"],
      ["owner-urgent", "owner", "urgent"],
      ["service-young", "client", "service"],
    ]) {
      queued.push(await enqueue(marker, label, audience, rank));
    }
    let state = await outboxState();
    for (const q of queued) expect(item(state, q.key).status).toBe("queued");

    // Release SMTP only (main stays paused): every email goes to the local SMTP server, whose
    // inbox then shows the hand-over order. One client email per slot; passClientGap opens it.
    await setOutboxState("smtp_paused_until_ms", null);
    await setOutboxState("owner_route_paused_until_ms", null);
    await setOutboxState("next_slot_at_ms", null);
    state = await runOutbox();
    for (let slot = 0; slot < 20 && queued.some((q) => item(state, q.key).status !== "sent"); slot++) {
      state = await passClientGap();
    }

    const expected = [
      "owner-urgent",
      "owner-booking",
      "urgent",
      "booking-old",
      "booking-young",
      "service-old",
      "service-young",
      "marketing-old",
      "marketing-young",
    ];
    for (const q of queued) {
      expect(item(state, q.key), q.label).toMatchObject({ status: "sent", provider: "smtp", attempts: 1 });
    }
    const received = (await smtpInbox())
      .flatMap((m) => (m.to ?? []).map((t) => t.address))
      .filter((address) => address.startsWith(`${marker}-`))
      .map((address) => address.slice(marker.length + 1).replace(/@example\.com$/, ""));
    expect(received).toEqual(expected);

    // The queue's own record agrees: send times follow the same order.
    const sentAt = expected.map((label) => item(state, queued.find((q) => q.label === label).key).sent_at_ms);
    expect([...sentAt].sort((a, b) => a - b)).toEqual(sentAt);
  });
});
