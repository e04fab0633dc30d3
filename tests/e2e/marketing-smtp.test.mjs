// RFC 8058 on every route, inside workerd: a marketing email that goes out over SMTP (the main
// provider paused, as after its daily limit) reaches the SMTP server (maildev) with the same
// `List-Unsubscribe` and `List-Unsubscribe-Post` headers the main provider is given.
import { env } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { eventually, item, outboxState, passClientGap, queuedEmail, sendCampaign, setOutboxState, smtpInbox, unique } from "./helpers.mjs";

describe("marketing over SMTP", () => {
  it("the message at the SMTP server carries both RFC 8058 headers, as queued", async () => {
    await outboxState(); // the outbox creates its tables on first use
    // The main provider is paused (as after its daily limit): SMTP carries everything.
    await setOutboxState("main_paused_until_ms", Date.now() + 3_600_000);
    const to = `${unique("mkt")}@example.com`;
    const campaign = unique("smtp-");
    const r = await sendCampaign({ campaign, subject: "Spring offers", text: "Our spring offers are here.", recipients: [to] });
    expect(r.status, await r.clone().text()).toBe(202);
    expect((await r.json()).queued).toBe(1);
    const key = `marketing:${campaign}:${to}`;
    const queuedCopy = await queuedEmail(key);
    const queuedHeaders = new Map(queuedCopy.headers);
    const sent = await eventually(async () => {
      const state = await passClientGap();
      const it = item(state, key);
      if (it.status !== "sent") throw new Error(`${key} is ${it.status}`);
      return it;
    }, { ms: 30_000 });
    expect(sent).toMatchObject({ provider: "smtp", attempts: 1 });

    const message = await eventually(async () => {
      const got = (await smtpInbox()).filter((m) => m.to?.some((t) => t.address === to));
      expect(got).toHaveLength(1);
      return got[0];
    });
    // maildev's parsed `headers` drop structured ones (mailparser reads List-* into objects):
    // read the message as it arrived.
    const source = await (await fetch(`${env.MAILDEV_API}/api/email/${message.id}/source`)).text();
    const header = (name) => new RegExp(`^${name}: (.*(?:\r?\n[ \t].*)*)`, "mi").exec(source)?.[1].replace(/\r?\n[ \t]+/g, " ");
    expect(header("List-Unsubscribe")).toMatch(/^<https:\/\/engine\.test\/unsubscribe\/[A-Za-z0-9_.-]+>$/);
    expect(header("List-Unsubscribe-Post")).toBe("List-Unsubscribe=One-Click");
    // The same values the main provider would have been given.
    expect(header("List-Unsubscribe")).toBe(queuedHeaders.get("List-Unsubscribe"));
    expect(header("List-Unsubscribe-Post")).toBe(queuedHeaders.get("List-Unsubscribe-Post"));
  });
});
