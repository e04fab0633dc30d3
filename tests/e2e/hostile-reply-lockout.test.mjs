// Hostile review: a holder of one reply address (the guest's confirmation forwarded to a friend,
// a travel agent's copy, a shared inbox — the address is in every copy and works 400 days)
// shuts the guest out of their own booking's conversation for good. The bound on messages kept
// per booking (INBOUND_MAX_PER_BOOKING, 200) is a lifetime bound per booking, shared by every
// sender: 200 short messages from anyone fill it, and from then on every message — the guest's
// own "we'll arrive after midnight" included — is refused back with setReject, for the life of
// the booking. The owner hears of at most 5 a day.
// (Adjusted on the fix's branch: the stranger's 200 messages are no longer all kept — their share
// is bounded — so the loop counts refusals instead of expecting none.)
import { env } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { book, deliverInbound, rows, sendThrough, unique } from "./helpers.mjs";

function message(from, to, n) {
  return [
    `From: <${from}>`,
    `To: <${to}>`,
    `Subject: Re: your stay ${n}`,
    `Message-ID: <filler-${n}-${unique("m")}@evil.example>`,
    "Date: Sat, 5 Dec 2026 11:02:13 +0100",
    "Content-Type: text/plain; charset=utf-8",
    "",
    `note ${n}`,
    "",
  ].join("\r\n");
}

describe("hostile: one reply address shuts the guest out of their booking's conversation", () => {
  it("after another sender filled the booking's conversation, the guest's own reply is still kept", async () => {
    const guest = `${unique("ana")}@example.com`.toLowerCase();
    const b = await book({ email: guest });
    const key = `booking_confirmation:${b.bookingId}`;
    await sendThrough(key);
    const [row] = await rows("SELECT to_addr FROM emails WHERE dedupe_key = ?", key);
    const replyTo = (await env.EMAIL.lastMessage(row.to_addr))?.replyTo?.email;
    expect(replyTo).toMatch(/^reply\+/);

    // The stranger writes 200 messages (the booking's old lifetime bound, shared by everyone);
    // the engine keeps what its share of the conversation allows and refuses the rest.
    const started = Date.now();
    let kept = 0;
    let refused = 0;
    for (let i = 0; i < 200; i++) {
      const m = await deliverInbound("someone@evil.example", replyTo, message("someone@evil.example", replyTo, i));
      if (m.rejected) refused++;
      else kept++;
    }
    const filled = Date.now() - started;
    const guestReply = await deliverInbound(guest, replyTo, message(guest, replyTo, "guest"));
    const [{ n }] = await rows("SELECT COUNT(*) AS n FROM inbound_messages WHERE booking_id = ?", b.bookingId);
    console.log(`hostile reply lockout: 200 messages from one stranger in ${filled} ms (${kept} kept, ${refused} refused); the guest's own reply: ${guestReply.rejected ?? "kept"}; ${n} kept on the booking`);
    expect(refused, "the stranger's messages are bounded").toBeGreaterThan(0);
    expect(guestReply.rejected, "the guest's reply was refused").toBeNull();
    // The stranger's alerts came out of their own share too: the owner hears of the guest's reply.
    const [mine] = await rows(
      "SELECT alerted, sender_share FROM inbound_messages WHERE booking_id = ? AND lower(from_addr) = ?",
      b.bookingId,
      guest,
    );
    expect(mine).toEqual({ alerted: 1, sender_share: "guest" });
  });
});
