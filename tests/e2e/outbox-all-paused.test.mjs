// A daily limit with SMTP off leaves no route for guest mail, inside workerd with the real outbox
// Durable Object, the wrapped send_email binding (tests/e2e/email-with-faults.mjs) and maildev as
// the SMTP failover: the admin shows a banner; the owner's alert goes out at once by the owner
// route (a send_email binding restricted to the owner's verified address, outside the daily
// limits), or — without one — waits in the outbox and goes out once as soon as a route is back.
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import {
  adminCookie, adminPage, enqueueEmail, eventually, item, oneAlarm, operatorRoute, outboxState, outboxStub,
  queuedEmail, runOutbox, setOutboxState, smtpInbox, today, tries, turn, unique,
} from "./helpers.mjs";

describe("every route paused", () => {
  it("without a working owner route: the owner's one alert waits and goes out once a route is back", async () => {
    await outboxState();
    // The owner route failing too (its own pause), so no route reaches the owner.
    await setOutboxState("owner_route_paused_until_ms", Date.now() + 3_600_000);
    // SMTP off: the operator paused it.
    const off = await operatorRoute("smtp", "pause", 60);
    expect(off.status).toBe(200);
    expect((await off.json()).pausedUntilMs).toBeGreaterThan(Date.now() + 3_000_000);
    const to = `${unique("quota")}+daily-limit@example.com`;
    const key = await enqueueEmail(to);
    let state = await oneAlarm(key);
    let it = item(state, key);
    expect(it.status).toBe("waiting");
    expect(tries(state, it)).toEqual([["cloudflare_email", "failed"]]);
    const dayMs = 86_400_000;
    expect(state.mainPausedUntilMs).toBe((Math.floor(Date.now() / dayMs) + 1) * dayMs);
    const alertKey = `owner_provider_paused:cloudflare_email:${today()}:e-daily-limit-exceeded`;
    expect(item(state, alertKey)?.status).toBe("queued");
    const alert = await queuedEmail(alertKey);
    expect(alert.subject).toBe("cloudflare_email hit its daily limit: no route is sending");

    const cookie = await adminCookie();
    const overview = await adminPage("/admin", cookie);
    expect(overview).toContain('id="all-routes-paused"');
    expect(overview).toContain("SMTP failover is paused too");

    // Later: the operator turns SMTP back on; the alert goes out at once, once, and so does the email.
    const on = await operatorRoute("smtp", "resume");
    expect(on.status).toBe(200);
    expect((await on.json()).released).toBeGreaterThanOrEqual(1);
    state = await runOutbox();
    expect(item(state, alertKey)).toMatchObject({ status: "sent", provider: "smtp", attempts: 1 });
    state = await turn(key);
    expect(item(state, key)).toMatchObject({ status: "sent", provider: "smtp" });
    const inbox = await smtpInbox();
    const alerts = inbox.filter((m) => m.subject === "cloudflare_email hit its daily limit: no route is sending");
    expect(alerts).toHaveLength(1);
    expect(await adminPage("/admin", cookie)).not.toContain('id="all-routes-paused"');
  });

  it("our sender refused by the main provider with SMTP off: the owner's one alert goes out at once by the owner route, the guest's email waits for a route", async () => {
    await outboxState();
    await setOutboxState("owner_route_paused_until_ms", null);
    await setOutboxState("main_paused_until_ms", null);
    const off = await operatorRoute("smtp", "pause", 60);
    expect(off.status).toBe(200);
    const to = `${unique("sender")}+sender-not-verified@example.com`;
    const key = await enqueueEmail(to);
    let state = await oneAlarm(key);
    expect(item(state, key).status).toBe("waiting");
    const alertKey = `owner_provider_paused:cloudflare_email:${today()}:e-sender-not-verified`;
    state = await eventually(async () => {
      await runDurableObjectAlarm(outboxStub());
      const s = await outboxState();
      expect(item(s, alertKey)).toMatchObject({ status: "sent", provider: "owner_route", attempts: 1 });
      return s;
    });
    // Guest mail never takes the owner route: it waits for a route.
    expect(item(state, key).status).toBe("waiting");
    expect(tries(state, item(state, key))).toEqual([["cloudflare_email", "failed"]]);
    const cookie = await adminCookie();
    expect(await adminPage("/admin", cookie)).toContain('id="all-routes-paused"');
    // SMTP back: the guest's email goes by SMTP; the alert is not sent again.
    expect((await operatorRoute("smtp", "resume")).status).toBe(200);
    state = await turn(key);
    expect(item(state, key)).toMatchObject({ status: "sent", provider: "smtp" });
    state = await runOutbox();
    expect(item(state, alertKey)).toMatchObject({ status: "sent", provider: "owner_route", attempts: 1 });
    expect(state.items.filter((i) => i.dedupe_key === alertKey)).toHaveLength(1);
  });

});
