// The production guard, inside workerd. This run's PUBLIC_BASE_URL (https://engine.test) is not a
// loopback address, so the engine behaves as in production: a secret published in
// .dev.vars.example, a signing key or operator token shorter than 32 bytes, or SMTP credentials
// without TLS turn that feature off, with a log line and a /health answer naming the variable,
// while correctly configured sources keep working. The test configuration itself is such a
// correct production configuration (/health 200).
import { env, SELF } from "cloudflare:test";
import { describe, it, expect, vi } from "vitest";
import example from "../../.dev.vars.example?raw";
import { PARTNERS, bookingDelivery, duffelSignature, postGeneric, rows, unique } from "./helpers.mjs";
import duffelOrder from "../fixtures/duffel-order-created.json";

/** The published value of `name` in .dev.vars.example. */
function published(name) {
  const line = example.split("\n").find((l) => l.startsWith(`${name}=`));
  if (!line) throw new Error(`${name} is not in .dev.vars.example`);
  return line.slice(name.length + 1).trim();
}

/** Runs `fn` with some bindings changed (the Worker reads its env on every request). */
async function withBindings(changes, fn) {
  const before = Object.fromEntries(Object.keys(changes).map((k) => [k, env[k]]));
  Object.assign(env, changes);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
  }
}

async function health() {
  const r = await SELF.fetch("https://engine.test/health");
  return { status: r.status, body: await r.json() };
}

describe("production guard", () => {
  it("the test configuration is a correct production one: /health is ok", async () => {
    expect(await health()).toEqual({ status: 200, body: { status: "ok", service: "booking-email-engine" } });
  });

  it("each refused configuration names its variable in /health and the log, and only its feature stops", async () => {
    const errors = vi.spyOn(console, "error");
    try {
      const cases = [
        ["ACTION_SIGNING_KEY", { ACTION_SIGNING_KEY: published("ACTION_SIGNING_KEY") }, /published in \.dev\.vars\.example: owner action links are off/],
        ["ACTION_SIGNING_KEY", { ACTION_SIGNING_KEY: "too-short-key" }, /is 13 bytes; at least 32 are needed/],
        ["OPERATOR_TOKEN", { OPERATOR_TOKEN: published("OPERATOR_TOKEN") }, /published/],
        ["OPERATOR_TOKEN", { OPERATOR_TOKEN: "0123456789012345678901234567890" }, /is 31 bytes/],
        ["UNSUBSCRIBE_SIGNING_KEY", { UNSUBSCRIBE_SIGNING_KEY: published("UNSUBSCRIBE_SIGNING_KEY") }, /marketing sends are refused/],
        ["LITEAPI_WEBHOOK_TOKEN", { LITEAPI_WEBHOOK_TOKEN: published("LITEAPI_WEBHOOK_TOKEN") }, /liteAPI webhooks are refused/],
        ["DUFFEL_WEBHOOK_SECRETS", { DUFFEL_WEBHOOK_SECRETS: `test-duffel-secret ${published("DUFFEL_WEBHOOK_SECRETS")}` }, /published/],
        ["STRIPE_WEBHOOK_SECRETS", { STRIPE_WEBHOOK_SECRETS: published("STRIPE_WEBHOOK_SECRETS") }, /published/],
        ["RESEND_WEBHOOK_SECRETS", { RESEND_WEBHOOK_SECRETS: published("RESEND_WEBHOOK_SECRETS") }, /published/],
        ["GENERIC_WEBHOOK_SECRETS", { GENERIC_WEBHOOK_SECRETS: `${published("GENERIC_WEBHOOK_SECRETS")} acme=${PARTNERS.acme[0]}` }, /partner\(s\) default are refused/],
        ["ADMIN_ACCOUNTS", { ADMIN_ACCOUNTS: published("ADMIN_ACCOUNTS") }, /its password is public/],
        ["REPLY_SIGNING_KEY", { REPLY_SIGNING_KEY: published("REPLY_SIGNING_KEY") }, /published in \.dev\.vars\.example: reply addresses are off/],
        ["REPLY_SIGNING_KEY", { REPLY_SIGNING_KEY: "short-reply-key" }, /is 15 bytes; at least 32 are needed: reply addresses are off/],
        ["SMTP_TLS", { SMTP_HOST: "smtp.example.com", SMTP_TLS: "off", SMTP_USERNAME: "engine", SMTP_PASSWORD: "secret" }, /password would cross the network in clear/],
      ];
      for (const [variable, bindings, reason] of cases) {
        errors.mockClear();
        const { status, body } = await withBindings(bindings, health);
        expect(status, variable).toBe(503);
        expect(body.status).toBe("refused");
        expect(body.refused, variable).toEqual([{ variable, reason: expect.stringMatching(reason) }]);
        const logged = errors.mock.calls.map((c) => c.join(" ")).filter((l) => l.includes("configuration refused"));
        expect(logged, variable).toEqual([expect.stringContaining(`configuration refused: ${variable}: `)]);
      }
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
        const { body } = await health();
        expect(body.refused.map((r) => r.variable).sort()).toEqual(["ACTION_SIGNING_KEY", "ADMIN_ACCOUNTS", "GENERIC_WEBHOOK_SECRETS", "LITEAPI_WEBHOOK_TOKEN", "OPERATOR_TOKEN"]);
        // The published liteAPI token is refused: nothing stored.
        const d = bookingDelivery();
        const lite = await SELF.fetch("https://engine.test/webhooks/liteapi", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: published("LITEAPI_WEBHOOK_TOKEN") },
          body: d.body,
        });
        expect(lite.status).toBe(401);
        expect(await rows("SELECT COUNT(*) AS n FROM raw_events WHERE event_id = ?", d.eventId)).toEqual([{ n: 0 }]);
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
        // Owner action links are off.
        const action = await SELF.fetch("https://engine.test/actions/abc.def");
        expect(action.status).toBe(503);
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

  it("on this machine (a loopback PUBLIC_BASE_URL) the published values are what they are for", async () => {
    const { status } = await withBindings(
      {
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
