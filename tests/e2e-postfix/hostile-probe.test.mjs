// Hostile review: the probe rule ("one bad email never stops the next") abused by one partner.
// A set-aside email is judged on "the next different email in line"; when that one is refused the
// same way, the route is paused as ours (PROVIDER_AUTH_PAUSE_MS, 1 h). A partner (acme) controls
// both emails: two bookings of its own whose text a real relay's content filter refuses (here
// Postfix `body_checks` on REFUSED_MARKER; in the world a spam signature such as the GTUBE string
// or a URL on a blocklist's test domain, in `hotel_name` or `checkin_instructions`) are queued one
// behind the other, so each is the other's probe — and the SMTP route, which carries all mail
// while the main provider is out of quota, pauses for everyone. The pair keeps its place and
// budget, so it pauses the route again after each pause; two fresh bookings start over.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { PARTNERS, book, dateInDays, handedOver, outboxState, outboxStub, passClientGap, postGeneric, setOutboxState, unique } from "../e2e/helpers.mjs";

const REFUSED_MARKER = "REFUSE-THIS-CONTENT";

function stay(bookingId, i) {
  return {
    type: "hotel_booked",
    data: {
      booking_id: bookingId,
      status: "CONFIRMED",
      hotel_id: null,
      hotel_name: `Harbour ${REFUSED_MARKER} Hotel`,
      checkin: dateInDays(40),
      checkout: dateInDays(42),
      rooms: [{ room_name: "Double", board_name: null, adults: 2, children: 0 }],
      holder: { name: { first_name: `Probe${i}`, last_name: "Partner" }, email: `probe${i}.${bookingId.toLowerCase()}@example.com`, phone: null },
      guests: [],
      total: { amount: "100.00", currency: "EUR" },
      hotel_confirmation_number: null,
      sandbox: false,
      location: { time_zone: "Europe/Madrid" },
    },
  };
}

describe("hostile: a partner's two emails pause the SMTP route for every guest", () => {
  it("a liteAPI guest's confirmation still goes by SMTP when one partner's two bookings carry text the relay refuses", async () => {
    await outboxState();
    await runInDurableObject(outboxStub(), async (_o, st) => {
      st.storage.sql.exec("UPDATE queue SET status = 'skipped', set_aside_on = 0 WHERE status IN ('queued', 'waiting')");
      st.storage.sql.exec("DELETE FROM route_log");
      st.storage.sql.exec("DELETE FROM state WHERE key LIKE 'smtp_pause_%'");
    });
    // The main provider is out of its daily quota: SMTP carries every email.
    await setOutboxState("main_paused_until_ms", Date.now() + 86_400_000);
    await setOutboxState("smtp_paused_until_ms", null);
    await fetch(`${env.POSTFIX_API}/_test/configure`, { method: "POST", body: JSON.stringify({ refuseSender: false }) });

    const ids = [unique("ACME_PROBE_"), unique("ACME_PROBE_")];
    for (const [i, id] of ids.entries()) {
      const { response } = await postGeneric(JSON.stringify(stay(id, i)), { secret: PARTNERS.acme[0] });
      expect(response.status, await response.clone().text()).toBe(202);
    }
    for (const id of ids) await handedOver(id);
    const victim = await book();
    const key = `booking_confirmation:${victim.bookingId}`;

    let state;
    for (let slot = 0; slot < 4; slot++) {
      state = await passClientGap();
      for (let i = 0; i < 5; i++) {
        await runDurableObjectAlarm(outboxStub());
      }
      state = await outboxState();
      if (state.items.find((x) => x.dedupe_key === key)?.status === "sent") break;
    }
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
    await outboxState();
    await runInDurableObject(outboxStub(), async (_o, st) => {
      st.storage.sql.exec("UPDATE queue SET status = 'skipped', set_aside_on = 0 WHERE status IN ('queued', 'waiting')");
      st.storage.sql.exec("DELETE FROM route_log");
      st.storage.sql.exec("DELETE FROM state WHERE key LIKE 'smtp_pause_%'");
    });
    await setOutboxState("main_paused_until_ms", Date.now() + 86_400_000);
    await setOutboxState("smtp_paused_until_ms", null);
    await fetch(`${env.POSTFIX_API}/_test/configure`, { method: "POST", body: JSON.stringify({ refuseSender: false }) });

    const id = unique("ACME_ONE_");
    const { response } = await postGeneric(JSON.stringify(stay(id, 9)), { secret: PARTNERS.acme[0] });
    expect(response.status, await response.clone().text()).toBe(202);
    await handedOver(id);
    const victim = await book();
    const key = `booking_confirmation:${victim.bookingId}`;

    let state;
    for (let slot = 0; slot < 4; slot++) {
      await passClientGap();
      for (let i = 0; i < 5; i++) await runDurableObjectAlarm(outboxStub());
      state = await outboxState();
      if (state.items.find((x) => x.dedupe_key === key)?.status === "sent") break;
    }
    const paused = state.routeHistory.filter((e) => e.route === "smtp" && e.event === "paused");
    expect(paused, "one booking's two emails paused the SMTP route").toEqual([]);
    expect(state.items.find((x) => x.dedupe_key === key)?.status).toBe("sent");
    for (const k of [`owner_new_booking:${id}`, `booking_confirmation:${id}`]) {
      expect(state.items.find((x) => x.dedupe_key === k)?.status, k).toBe("dead");
    }
  });
});
