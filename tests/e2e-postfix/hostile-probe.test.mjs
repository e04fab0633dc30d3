// Hostile review: the probe rule ("one bad email never stops the next") abused by one partner.
// A set-aside email is judged on "the next different email in line"; when that one is refused the
// same way, the route is paused as ours (PROVIDER_AUTH_PAUSE_MS, 1 h). A partner (acme) controls
// both emails: two bookings of its own whose text a real relay's content filter refuses (here
// Postfix `body_checks` on REFUSED_MARKER; in the world a spam signature such as the GTUBE string
// or a URL on a blocklist's test domain, in `hotel_name` or `checkin_instructions`) are queued one
// behind the other, so each is the other's probe — and the SMTP route, which carries all mail
// while the main provider is out of quota, pauses for everyone. The pair keeps its place and
// budget, so it pauses the route again after each pause; two fresh bookings start over.
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { PARTNERS, book, dateInDays, handedOver, outboxState, outboxStub, passClientGap, postGeneric, smtpOnlyOutbox, unique } from "../e2e/helpers.mjs";
import { partnerHotelBooked } from "../e2e/payloads.mjs";

const REFUSED_MARKER = "REFUSE-THIS-CONTENT";

/** Partner acme's stay whose hotel name carries the text the relay refuses; `i` tells its guests apart. */
function stay(bookingId, i) {
  return partnerHotelBooked(bookingId, {
    amount: "100.00",
    hotel_name: `Harbour ${REFUSED_MARKER} Hotel`,
    checkin: dateInDays(40),
    checkout: dateInDays(42),
    holder: { name: { first_name: `Probe${i}`, last_name: "Partner" }, email: `probe${i}.${bookingId.toLowerCase()}@example.com`, phone: null },
  });
}

/**
 * The main provider out of its daily quota, so SMTP (the private Postfix, which accepts our
 * sender) carries every email; nothing queued before, no route history, no SMTP pause.
 */
async function smtpThroughPostfixOnly() {
  await smtpOnlyOutbox();
  await fetch(`${env.POSTFIX_API}/_test/configure`, { method: "POST", body: JSON.stringify({ refuseSender: false }) });
}

/**
 * Opens up to four client slots, running the outbox's alarm five times in each, until the email
 * `key` is sent; returns the outbox's state after.
 */
async function slotsUntilSent(key) {
  let state;
  for (let slot = 0; slot < 4; slot++) {
    await passClientGap();
    for (let i = 0; i < 5; i++) await runDurableObjectAlarm(outboxStub());
    state = await outboxState();
    if (state.items.find((x) => x.dedupe_key === key)?.status === "sent") break;
  }
  return state;
}

describe("hostile: a partner's two emails pause the SMTP route for every guest", () => {
  it("a liteAPI guest's confirmation still goes by SMTP when one partner's two bookings carry text the relay refuses", async () => {
    // The main provider is out of its daily quota: SMTP carries every email.
    await smtpThroughPostfixOnly();

    const ids = [unique("ACME_PROBE_"), unique("ACME_PROBE_")];
    for (const [i, id] of ids.entries()) {
      const { response } = await postGeneric(JSON.stringify(stay(id, i)), { secret: PARTNERS.acme[0] });
      expect(response.status, await response.clone().text()).toBe(202);
    }
    for (const id of ids) await handedOver(id);
    const victim = await book();
    const key = `booking_confirmation:${victim.bookingId}`;

    const state = await slotsUntilSent(key);
    const victimItem = state.items.find((x) => x.dedupe_key === key);
    const paused = state.routeHistory.filter((e) => e.route === "smtp" && e.event === "paused");
    console.log(
      "hostile probe:",
      JSON.stringify({
        victim: victimItem?.status,
        smtpPausedForMin: state.smtpPausedUntilMs ? Math.round((state.smtpPausedUntilMs - Date.now()) / 60000) : 0,
        pauses: paused.map((p) => p.detail),
        acme: state.items.filter((i) => ids.some((id) => i.dedupe_key.endsWith(id))).map((i) => [i.dedupe_key, i.status]),
      }),
    );
    expect(paused, "acme's own two emails paused the SMTP route").toEqual([]);
    expect(victimItem?.status).toBe("sent");
  });

  it("one booking whose guest confirmation and owner alert both carry the refused text: set aside together, the route never paused, the next guest's email goes", async () => {
    await smtpThroughPostfixOnly();

    const id = unique("ACME_ONE_");
    const { response } = await postGeneric(JSON.stringify(stay(id, 9)), { secret: PARTNERS.acme[0] });
    expect(response.status, await response.clone().text()).toBe(202);
    await handedOver(id);
    const victim = await book();
    const key = `booking_confirmation:${victim.bookingId}`;

    const state = await slotsUntilSent(key);
    const paused = state.routeHistory.filter((e) => e.route === "smtp" && e.event === "paused");
    expect(paused, "one booking's two emails paused the SMTP route").toEqual([]);
    expect(state.items.find((x) => x.dedupe_key === key)?.status).toBe("sent");
    for (const k of [`owner_new_booking:${id}`, `booking_confirmation:${id}`]) {
      expect(state.items.find((x) => x.dedupe_key === k)?.status, k).toBe("dead");
    }
  });
});
