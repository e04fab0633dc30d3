// The production guard, inside workerd. This run declares no ENGINE_ENV, so the engine behaves as
// in production: a secret published in .dev.vars.example (recognised by the key it produces, with
// or without its whsec_ prefix), a signing key or operator token shorter than 32 bytes, SMTP
// credentials without TLS, or a PUBLIC_BASE_URL that is unset, loopback or plain http:// turn that
// feature off, with a log line; /health tells the world only "degraded", the operator (GET
// /admin/health, the admin overview) which variable and why, while correctly configured sources
// keep working. The test configuration itself is such a correct production configuration (/health
// 200). Only ENGINE_ENV=development makes the published values acceptable.
import { env, SELF } from "cloudflare:test";
import { describe, it, expect, vi } from "vitest";
import example from "../../.dev.vars.example?raw";
import { PARTNERS, adminCookie, adminPage, bookingDelivery, duffelSignature, postGeneric, postLiteapi, rows, sendCampaign, unique, withBindings } from "./helpers.mjs";
import duffelOrder from "../fixtures/duffel-order-created.json";

const OPERATOR = "test-operator-token-0123456789abcdef";

/** A marketing send the guard refuses (503): the reason the answer gives. */
async function refusedMarketingSend() {
  const send = await sendCampaign({ campaign: unique("spring-"), subject: "Spring offers", text: "Hello from Example Trips.", recipients: ["a@example.com"] });
  expect(send.status).toBe(503);
  return (await send.json()).message;
}

/** The published value of `name` in .dev.vars.example. */
function published(name) {
  const line = example.split("\n").find((l) => l.startsWith(`${name}=`));
  if (!line) throw new Error(`${name} is not in .dev.vars.example`);
  return line.slice(name.length + 1).trim();
}

async function health() {
  const r = await SELF.fetch("https://engine.test/health");
  return { status: r.status, body: await r.json() };
}

/** The operator's view of the configuration (`GET /admin/health`), by bearer token or, when given, an admin session cookie. */
async function operatorHealth(cookie) {
  const headers = cookie ? { cookie } : { authorization: `Bearer ${OPERATOR}` };
  const r = await SELF.fetch("https://engine.test/admin/health", { headers });
  expect(r.status, await r.clone().text()).toBe(200);
  return r.json();
}

/** What a published secret looks like written without its whsec_ prefix. */
const bare = (secret) => secret.replace(/^whsec_/, "");

/** A liteAPI delivery with `token`: its status, and whether its raw event was stored. */
async function liteapiWith(token) {
  const d = bookingDelivery();
  const r = await postLiteapi(d.body, { token });
  const [{ n }] = await rows("SELECT COUNT(*) AS n FROM raw_events WHERE event_id = ?", d.eventId);
  return { status: r.status, stored: n };
}

describe("production guard", () => {
  it("the test configuration is a correct production one: /health is ok", async () => {
    expect(await health()).toEqual({ status: 200, body: { status: "ok", service: "booking-email-engine" } });
    expect(await operatorHealth()).toEqual({ status: "ok", service: "booking-email-engine", environment: "production", refused: [] });
  });

  it("each refused configuration: /health says only degraded; the operator API and the log name the variable; only its feature stops", async () => {
    const errors = vi.spyOn(console, "error");
    const cookie = await adminCookie();
    try {
      const cases = [
        ["ACTION_SIGNING_KEY", { ACTION_SIGNING_KEY: published("ACTION_SIGNING_KEY") }, /published in \.dev\.vars\.example: owner action links are off/],
        ["ACTION_SIGNING_KEY", { ACTION_SIGNING_KEY: "too-short-key" }, /is 13 bytes; at least 32 are needed/],
        ["OPERATOR_TOKEN", { OPERATOR_TOKEN: published("OPERATOR_TOKEN") }, /published/],
        ["OPERATOR_TOKEN", { OPERATOR_TOKEN: "0123456789012345678901234567890" }, /is 31 bytes/],
        ["UNSUBSCRIBE_SIGNING_KEY", { UNSUBSCRIBE_SIGNING_KEY: published("UNSUBSCRIBE_SIGNING_KEY") }, /marketing sends are refused/],
        ["UNSUBSCRIBE_SIGNING_KEY", { UNSUBSCRIBE_SIGNING_KEY: "short" }, /is 5 bytes; at least 32 are needed: marketing sends are refused/],
        ["LITEAPI_WEBHOOK_TOKEN", { LITEAPI_WEBHOOK_TOKEN: published("LITEAPI_WEBHOOK_TOKEN") }, /liteAPI webhooks are refused/],
        ["DUFFEL_WEBHOOK_SECRETS", { DUFFEL_WEBHOOK_SECRETS: `test-duffel-secret ${published("DUFFEL_WEBHOOK_SECRETS")}` }, /published/],
        ["STRIPE_WEBHOOK_SECRETS", { STRIPE_WEBHOOK_SECRETS: published("STRIPE_WEBHOOK_SECRETS") }, /published/],
        ["STRIPE_WEBHOOK_SECRETS", { STRIPE_WEBHOOK_SECRETS: bare(published("STRIPE_WEBHOOK_SECRETS")) }, /published/],
        ["RESEND_WEBHOOK_SECRETS", { RESEND_WEBHOOK_SECRETS: published("RESEND_WEBHOOK_SECRETS") }, /published/],
        ["RESEND_WEBHOOK_SECRETS", { RESEND_WEBHOOK_SECRETS: bare(published("RESEND_WEBHOOK_SECRETS")) }, /published/],
        ["GENERIC_WEBHOOK_SECRETS", { GENERIC_WEBHOOK_SECRETS: `${published("GENERIC_WEBHOOK_SECRETS")} acme=${PARTNERS.acme[0]}` }, /partner\(s\) default are refused/],
        ["ADMIN_ACCOUNTS", { ADMIN_ACCOUNTS: published("ADMIN_ACCOUNTS") }, /its password is public/],
        ["REPLY_SIGNING_KEY", { REPLY_SIGNING_KEY: published("REPLY_SIGNING_KEY") }, /published in \.dev\.vars\.example: reply addresses are off/],
        ["REPLY_SIGNING_KEY", { REPLY_SIGNING_KEY: "short-reply-key" }, /is 15 bytes; at least 32 are needed: reply addresses are off/],
        ["SMTP_TLS", { SMTP_HOST: "smtp.example.com", SMTP_TLS: "off", SMTP_USERNAME: "engine", SMTP_PASSWORD: "secret" }, /password would cross the network in clear/],
        ["PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "http://engine.example.com" }, /is not https:\/\/.*owner action links and marketing are off/],
        ["PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "" }, /is not set: links are never written to a loopback address outside development/],
        ["PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "http://127.0.0.1:8787" }, /is a loopback address/],
      ];
      for (const [variable, bindings, reason] of cases) {
        // The correct configuration in between: a refusal is logged once per isolate and set of
        // refusals, so two cases refusing the same variable would otherwise log once.
        expect((await health()).status).toBe(200);
        errors.mockClear();
        const { status, body } = await withBindings(bindings, health);
        expect(status, variable).toBe(503);
        expect(body, variable).toEqual({ status: "degraded", service: "booking-email-engine" });
        // The operator sees which and why (a session when the bearer token itself is refused).
        const view = await withBindings(bindings, () => operatorHealth("OPERATOR_TOKEN" in bindings ? cookie : undefined));
        expect(view.status).toBe("degraded");
        expect(view.refused, variable).toEqual([{ variable, reason: expect.stringMatching(reason) }]);
        const logged = errors.mock.calls.map((c) => c.join(" ")).filter((l) => l.includes("configuration refused"));
        expect(logged, variable).toEqual([expect.stringContaining(`configuration refused: ${variable}: `)]);
      }
      // The admin overview lists them too.
      const overview = await withBindings({ PUBLIC_BASE_URL: "http://engine.example.com", LITEAPI_WEBHOOK_TOKEN: published("LITEAPI_WEBHOOK_TOKEN") }, () => adminPage("/admin", cookie));
      expect(overview).toContain('id="configuration-refused"');
      expect(overview).toContain("<code>PUBLIC_BASE_URL</code> is not https://");
      expect(overview).toContain("<code>LITEAPI_WEBHOOK_TOKEN</code> is a value published in .dev.vars.example");
    } finally {
      errors.mockRestore();
    }
    expect((await health()).status).toBe(200);
  });

  it("a refused feature is off; correctly configured sources keep working beside it", async () => {
    await withBindings(
      {
        LITEAPI_WEBHOOK_TOKEN: published("LITEAPI_WEBHOOK_TOKEN"),
        ACTION_SIGNING_KEY: published("ACTION_SIGNING_KEY"),
        OPERATOR_TOKEN: published("OPERATOR_TOKEN"),
        GENERIC_WEBHOOK_SECRETS: `${published("GENERIC_WEBHOOK_SECRETS")} acme=${PARTNERS.acme[0]}`,
        ADMIN_ACCOUNTS: published("ADMIN_ACCOUNTS"),
      },
      async () => {
        expect((await health()).body.status).toBe("degraded");
        // The published liteAPI token is refused: nothing stored.
        expect(await liteapiWith(published("LITEAPI_WEBHOOK_TOKEN"))).toEqual({ status: 401, stored: 0 });
        // So are the published generic secret (partner default) and the operator token.
        const payload = JSON.stringify({ type: "loyalty.points", data: {} });
        expect((await postGeneric(payload, { secret: published("GENERIC_WEBHOOK_SECRETS") })).response.status).toBe(401);
        const op = await SELF.fetch("https://engine.test/admin/outbox", { headers: { authorization: `Bearer ${published("OPERATOR_TOKEN")}` } });
        expect(op.status).toBe(503);
        // The published admin account cannot sign in.
        const signIn = await SELF.fetch("https://engine.test/admin/login", {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": "198.51.100.250" },
          body: new URLSearchParams({ account: "admin", password: "dev-admin-password", next: "/admin" }),
        });
        expect(signIn.status).not.toBe(303);
        // Owner action links are off, and the page says so without naming the configuration.
        const action = await SELF.fetch("https://engine.test/actions/abc.def");
        expect(action.status).toBe(503);
        expect(await action.text()).not.toMatch(/ACTION_SIGNING_KEY|\.dev\.vars/);
        // Correctly configured sources keep working: Duffel, and generic partner acme.
        const order = structuredClone(duffelOrder);
        delete order._modeled_on;
        order.id = unique("wev_");
        order.data.object.id = unique("ord_");
        const raw = JSON.stringify(order);
        const duffel = await SELF.fetch("https://engine.test/webhooks/duffel", {
          method: "POST",
          headers: { "content-type": "application/json", "x-duffel-signature": await duffelSignature(raw) },
          body: raw,
        });
        expect(duffel.status).toBe(202);
        expect((await postGeneric(payload, { secret: PARTNERS.acme[0] })).response.status).toBe(200);
      },
    );
  });

  it("an engine started without ENGINE_ENV and with PUBLIC_BASE_URL empty runs as in production: published tokens 401, /health degraded", async () => {
    const everything = {
      PUBLIC_BASE_URL: "",
      LITEAPI_WEBHOOK_TOKEN: published("LITEAPI_WEBHOOK_TOKEN"),
      GENERIC_WEBHOOK_SECRETS: published("GENERIC_WEBHOOK_SECRETS"),
      OPERATOR_TOKEN: published("OPERATOR_TOKEN"),
      ADMIN_ACCOUNTS: published("ADMIN_ACCOUNTS"),
    };
    await withBindings(everything, async () => {
      expect(await health()).toEqual({ status: 503, body: { status: "degraded", service: "booking-email-engine" } });
      expect(await liteapiWith(published("LITEAPI_WEBHOOK_TOKEN"))).toEqual({ status: 401, stored: 0 });
      expect((await postGeneric(JSON.stringify({ type: "loyalty.points", data: {} }), { secret: published("GENERIC_WEBHOOK_SECRETS") })).response.status).toBe(401);
      const op = await SELF.fetch("https://engine.test/admin/health", { headers: { authorization: `Bearer ${published("OPERATOR_TOKEN")}` } });
      expect(op.status).toBe(503);
      expect((await SELF.fetch("https://engine.test/actions/abc.def")).status).toBe(503);
    });
  });

  it("the same with an http:// public URL: published tokens 401, /health degraded, no owner link and no marketing", async () => {
    await withBindings({ PUBLIC_BASE_URL: "http://engine.example.com", LITEAPI_WEBHOOK_TOKEN: published("LITEAPI_WEBHOOK_TOKEN") }, async () => {
      expect(await health()).toEqual({ status: 503, body: { status: "degraded", service: "booking-email-engine" } });
      expect(await liteapiWith(published("LITEAPI_WEBHOOK_TOKEN"))).toEqual({ status: 401, stored: 0 });
      expect((await SELF.fetch("https://engine.test/actions/abc.def")).status).toBe(503);
      expect(await refusedMarketingSend()).toContain("PUBLIC_BASE_URL");
    });
  });

  it("a published secret written without its whsec_ prefix is refused; so is one key under two partner names", async () => {
    const secret = bare(published("GENERIC_WEBHOOK_SECRETS"));
    await withBindings({ GENERIC_WEBHOOK_SECRETS: secret }, async () => {
      expect((await health()).status).toBe(503);
      expect((await operatorHealth()).refused).toEqual([{ variable: "GENERIC_WEBHOOK_SECRETS", reason: expect.stringMatching(/published/) }]);
      expect((await postGeneric(JSON.stringify({ type: "loyalty.points", data: {} }), { secret: published("GENERIC_WEBHOOK_SECRETS") })).response.status).toBe(401);
    });
    // acme's key, and the same key again without its prefix (partner default): the engine could
    // not tell the two apart, so the generic source is off.
    await withBindings({ GENERIC_WEBHOOK_SECRETS: `acme=${PARTNERS.acme[0]} ${bare(PARTNERS.acme[0])}` }, async () => {
      expect((await health()).status).toBe(503);
      expect((await operatorHealth()).refused).toEqual([{ variable: "GENERIC_WEBHOOK_SECRETS", reason: expect.stringMatching(/same secret is configured for partners "acme" and "default"/) }]);
      expect((await postGeneric(JSON.stringify({ type: "loyalty.points", data: {} }), { secret: PARTNERS.acme[0] })).response.status).toBe(401);
    });
  });

  it("the published admin password under a fresh salt, and a published token stored with 'Bearer ', are refused", async () => {
    // What `npm run admin-password` makes from the published password: a new random salt.
    const salt = crypto.getRandomValues(new Uint8Array(16));
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode("dev-admin-password"), "PBKDF2", false, ["deriveBits"]);
    const hash = new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations: 1000 }, key, 256));
    const b64 = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const entry = `owner:pbkdf2-sha256:1000:${b64(salt)}:${b64(hash)}`;
    const signIn = (ip) =>
      SELF.fetch("https://engine.test/admin/login", {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": ip },
        body: new URLSearchParams({ account: "owner", password: "dev-admin-password", next: "/admin" }),
      });
    await withBindings({ ADMIN_ACCOUNTS: entry }, async () => {
      expect((await signIn("198.51.100.251")).status).toBe(401);
    });
    // The same entry signs in once development is declared: the refusal is the guard's.
    await withBindings({ ADMIN_ACCOUNTS: entry, ENGINE_ENV: "development" }, async () => {
      expect((await signIn("198.51.100.252")).status).toBe(303);
    });
    await withBindings({ LITEAPI_WEBHOOK_TOKEN: `Bearer ${published("LITEAPI_WEBHOOK_TOKEN")}` }, async () => {
      expect((await operatorHealth()).refused).toEqual([{ variable: "LITEAPI_WEBHOOK_TOKEN", reason: expect.stringMatching(/published/) }]);
      expect(await liteapiWith(`Bearer Bearer ${published("LITEAPI_WEBHOOK_TOKEN")}`)).toEqual({ status: 401, stored: 0 });
    });
  });

  it("a short unsubscribe key stops marketing only: webhooks and the operator API keep answering", async () => {
    await withBindings({ UNSUBSCRIBE_SIGNING_KEY: "short" }, async () => {
      expect((await health()).status).toBe(503);
      expect(await liteapiWith("test-liteapi-token")).toEqual({ status: 202, stored: 1 });
      expect((await SELF.fetch("https://engine.test/admin/outbox?limit=1", { headers: { authorization: `Bearer ${OPERATOR}` } })).status).toBe(200);
      expect(await refusedMarketingSend()).toContain("UNSUBSCRIBE_SIGNING_KEY");
    });
  });

  it("declared development (ENGINE_ENV=development) on this machine: the published values are what they are for", async () => {
    const { status } = await withBindings(
      {
        ENGINE_ENV: "development",
        PUBLIC_BASE_URL: "http://127.0.0.1:8787",
        ACTION_SIGNING_KEY: published("ACTION_SIGNING_KEY"),
        LITEAPI_WEBHOOK_TOKEN: published("LITEAPI_WEBHOOK_TOKEN"),
        OPERATOR_TOKEN: published("OPERATOR_TOKEN"),
      },
      health,
    );
    expect(status).toBe(200);
  });
});
