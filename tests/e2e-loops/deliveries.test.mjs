// The outbound deliveries page: dead and retrying deliveries by subscriber with their age, one
// delivery's attempts, and redrive (one, by subscriber, by time range) — the JSON API's operations
// as forms, through the same publisher code.
import { env, SELF } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { OPERATOR, adminCookie, adminForm, adminPage, deliveriesOf, deliveriesSettled, emailBounced, eventually, receiverPlan, subscribe, unique } from "../e2e/helpers.mjs";

/** A subscriber to `email.bounced` whose receiver answers 500 to every attempt. */
const subscribeAlways500 = () => subscribe(["email.bounced"], { always500: true });

/** The redrive form posted from `page` (303 expected); returns where it led. */
async function formPost(cookie, page, fields) {
  const r = await adminForm(cookie, page, "/admin/deliveries/redrive", fields);
  expect(r.status, await r.clone().text()).toBe(303);
  return new URL(r.headers.get("location"), "https://engine.test");
}

describe("outbound deliveries page", () => {
  it("lists dead deliveries by subscriber with their attempts; redrive one, by subscriber and by time range from the page", async () => {
    const sub = await subscribeAlways500();
    for (let i = 0; i < 3; i++) await emailBounced(`${unique("guest")}@example.net`);
    const dead = await deliveriesSettled(sub.id, 3, "dead");

    const cookie = await adminCookie();
    const list = await adminPage("/admin/deliveries", cookie);
    expect(list).toContain(sub.id);
    expect(list).toMatch(new RegExp(`${sub.id}</a>.*?</td><td>3</td><td>0</td>`, "s"));
    for (const d of dead) expect(list).toContain(d.delivery_id);
    const one = await adminPage(`/admin/delivery?id=${encodeURIComponent(dead[0].delivery_id)}`, cookie);
    expect((one.match(/<tr class="attempt">/g) ?? []).length).toBe(4);
    expect(one).toContain("HTTP 500 on attempt 4 of 4");
    expect(one).toContain('id="redrive-one"');

    await receiverPlan(sub.name, [], false);
    // One, from its own page.
    const back = await formPost(cookie, `/admin/delivery?id=${encodeURIComponent(dead[0].delivery_id)}`, { delivery_id: dead[0].delivery_id });
    expect(back.pathname).toBe("/admin/delivery");
    expect(back.searchParams.get("done")).toBe("deliveries_redriven");
    expect(back.searchParams.get("key")).toBe("1");
    await eventually(async () => expect((await deliveriesOf(sub.id))[0].status).toBe("delivered"), { ms: 15_000 });
    // By subscriber: the other two.
    const bySub = await formPost(cookie, "/admin/deliveries", { subscriber_id: sub.id });
    expect(bySub.searchParams.get("key")).toBe("2");
    await eventually(async () => expect((await deliveriesOf(sub.id)).every((d) => d.status === "delivered")).toBe(true), { ms: 15_000 });
    // By time range: nothing dead is left in it, nothing delivered is sent again.
    const now = new Date();
    const iso = (ms) => new Date(ms).toISOString().slice(0, 16);
    const range = await formPost(cookie, "/admin/deliveries", { from: iso(now.getTime() - 3_600_000), to: iso(now.getTime() + 60_000) });
    expect(range.searchParams.get("key")).toBe("0");
    const received = await (await fetch(`${env.WEBHOOK_RECEIVER}/__deliveries?name=${sub.name}`)).json();
    expect(received.filter((x) => x.status === 200)).toHaveLength(3);

    // Bad forms change nothing and say so.
    const html = await adminPage("/admin/deliveries", cookie);
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)[1];
    const bad = await SELF.fetch("https://engine.test/admin/deliveries/redrive", {
      method: "POST",
      headers: { cookie, origin: "https://engine.test", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf, from: "yesterday", to: "now" }),
    });
    expect(bad.status).toBe(400);
    expect((await SELF.fetch("https://engine.test/admin/deliveries?status=lost", { headers: { cookie } })).status).toBe(400);
    expect((await SELF.fetch("https://engine.test/admin/delivery?id=nope", { headers: { cookie } })).status).toBe(404);
  }, 90_000);

  it("redrive by time range takes only the dead deliveries created inside [from, to): from the page and from the JSON API", async () => {
    const sub = await subscribeAlways500();
    for (let i = 0; i < 8; i++) await emailBounced(`${unique("guest")}@example.net`);
    const dead = await deliveriesSettled(sub.id, 8, "dead", { ms: 60_000 });
    await receiverPlan(sub.name, [], false);

    // Creation times moved far into the past, where no other test's delivery lives, so a range
    // there selects only these: four around a minute-precise page range, four around an
    // ms-precise API range, each with one just inside and one just outside either edge.
    const pageFrom = Date.UTC(2001, 0, 2, 3, 0);
    const pageTo = pageFrom + 2 * 60_000;
    const apiFrom = Date.UTC(2002, 5, 6, 7, 8, 9, 10);
    const apiTo = apiFrom + 5_000;
    const at = [
      [pageFrom - 1, "page", false],
      [pageFrom, "page", true],
      [pageTo - 1, "page", true],
      [pageTo, "page", false],
      [apiFrom - 1, "api", false],
      [apiFrom, "api", true],
      [apiTo - 1, "api", true],
      [apiTo, "api", false],
    ];
    const seeded = dead.map((d, i) => ({ id: d.delivery_id, createdAt: at[i][0], via: at[i][1], inside: at[i][2] }));
    for (const d of seeded) {
      await env.DB.prepare("UPDATE webhook_deliveries SET created_at_ms = ? WHERE delivery_id = ?").bind(d.createdAt, d.id).run();
    }
    const statuses = async () => Object.fromEntries((await deliveriesOf(sub.id)).map((d) => [d.delivery_id, d.status]));
    const iso = (ms) => new Date(ms).toISOString().slice(0, 16);

    // The page's form: datetime-local minutes, read as UTC.
    const cookie = await adminCookie();
    const back = await formPost(cookie, "/admin/deliveries", { from: iso(pageFrom), to: iso(pageTo) });
    expect(back.pathname).toBe("/admin/deliveries");
    expect(back.searchParams.get("done")).toBe("deliveries_redriven");
    expect(back.searchParams.get("key")).toBe("2");
    let now = await statuses();
    for (const d of seeded.filter((d) => d.via === "page" && !d.inside)) expect(now[d.id]).toBe("dead");
    for (const d of seeded.filter((d) => d.via === "api")) expect(now[d.id]).toBe("dead");
    await eventually(async () => {
      const s = await statuses();
      for (const d of seeded.filter((d) => d.via === "page" && d.inside)) expect(s[d.id]).toBe("delivered");
    }, { ms: 15_000 });

    // The JSON API: ms UTC, the same [from, to).
    const r = await SELF.fetch("https://engine.test/admin/webhooks/redrive", {
      method: "POST",
      headers: OPERATOR,
      body: JSON.stringify({ fromMs: apiFrom, toMs: apiTo }),
    });
    const body = await r.json();
    expect(r.status, JSON.stringify(body)).toBe(200);
    const apiInside = seeded.filter((d) => d.via === "api" && d.inside).map((d) => d.id);
    expect(body.count).toBe(2);
    expect(body.more).toBe(false);
    expect([...body.redriven].sort()).toEqual([...apiInside].sort());
    await eventually(async () => {
      const s = await statuses();
      for (const id of apiInside) expect(s[id]).toBe("delivered");
    }, { ms: 15_000 });

    // Everything outside both ranges is still dead, never sent again; the receiver saw exactly the
    // four inside answered 200.
    now = await statuses();
    for (const d of seeded.filter((d) => !d.inside)) expect(now[d.id], `${d.id} at ${d.createdAt}`).toBe("dead");
    const received = await (await fetch(`${env.WEBHOOK_RECEIVER}/__deliveries?name=${sub.name}`)).json();
    expect(received.filter((x) => x.status === 200)).toHaveLength(4);

    // Asked again, a range whose dead deliveries were all redriven takes nothing more.
    const again = await formPost(cookie, "/admin/deliveries", { from: iso(pageFrom), to: iso(pageTo) });
    expect(again.searchParams.get("key")).toBe("0");
  }, 120_000);
});
