// The shared end-to-end test configuration (@cloudflare/vitest-plugin): the real Rust Worker, its
// Workflow, Durable Object, D1 and send_email binding, plus the local servers started by
// tests/e2e/global-setup.mjs. Fakes are swapped in through configuration only.
//
// Two runs use it (scripts/test.mjs): vitest.config.mjs with Cloudflare Email Service as the main
// provider, and vitest.resend.config.mjs with Resend (a local fake) as the main provider.
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { readFileSync } from "node:fs";
import { pbkdf2Sync } from "node:crypto";

/**
 * An `ADMIN_ACCOUNTS` entry (`<name>:pbkdf2-sha256:<iterations>:<salt>:<hash>`, base64url without
 * padding), made as `npm run admin-password` makes one.
 */
export function adminEntry(name, password, iterations = 100_000, salt = Buffer.from(`salt-of-${name}`.padEnd(16, "."))) {
  const hash = pbkdf2Sync(password, salt, iterations, 32, "sha256");
  return `${name}:pbkdf2-sha256:${iterations}:${salt.toString("base64url")}:${hash.toString("base64url")}`;
}

/**
 * @param {object} options
 * @param {string[]} options.include test files of this run
 * @param {(inject: Function) => Record<string, string>} [options.bindings] vars to add or override
 * @param {string} [options.main] the Worker's main module instead of wrangler.toml's (the cost
 *   benchmark's counting entry, bench/cost/entry.mjs)
 * @param {object} [options.test] vitest options to add or override
 */
export async function engineTestConfig({ include, bindings = () => ({}), main, test = {} }) {
  const migrations = await readD1Migrations("migrations");
  return {
    plugins: [
      // Ports of the local servers are chosen free at start, so a test run never collides with
      // `npm start` or another run.
      cloudflareTest(({ inject }) => ({
        wrangler: { configPath: "./wrangler.toml" },
        ...(main ? { main } : {}),
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            MAILDEV_API: `http://127.0.0.1:${inject("maildevWebPort")}`,
            // The calendar check of tests/e2e/global-setup.mjs (tests/e2e/calendars-parse.mjs).
            CALENDAR_CHECK_API: `http://127.0.0.1:${inject("calendarCheckPort")}`,
            RESEND_API: `http://127.0.0.1:${inject("resendPort")}`,
            LITEAPI_WEBHOOK_TOKEN: "test-liteapi-token",
            OWNER_EMAIL: "owner@example.com",
            SENDER_EMAIL: "bookings@example.com",
            SMTP_HOST: "127.0.0.1",
            SMTP_PORT: String(inject("maildevSmtpPort")),
            SMTP_TLS: "off",
            SMTP_USERNAME: "",
            SMTP_PASSWORD: "",
            SMTP_TIMEOUT_MS: "5000",
            // Production pacing: tests assert the 150–160 s gap instead of waiting for it.
            OUTBOX_GAP_MIN_MS: "150000",
            OUTBOX_GAP_MAX_MS: "160000",
            OUTBOX_MAX_ATTEMPTS: "6",
            MAX_WEBHOOK_BODY_BYTES: "65536",
            DUFFEL_WEBHOOK_SECRETS: "test-duffel-old-secret test-duffel-secret",
            // The generic source's partners: the unnamed secret is partner "default" (the form
            // before partners); "acme" holds two keys (rotation), "globex" one.
            GENERIC_WEBHOOK_SECRETS: [
              "whsec_dGVzdC1nZW5lcmljLXNlY3JldC0wMTIzNDU2Nzg5",
              "acme=whsec_dGVzdC1wYXJ0bmVyLWFjbWUta2V5LW9uZS0wMTIzNDU2",
              "acme=whsec_dGVzdC1wYXJ0bmVyLWFjbWUta2V5LXR3by0wMTIzNDU2",
              "globex=whsec_dGVzdC1wYXJ0bmVyLWdsb2JleC1rZXktMDEyMzQ1Njc=",
            ].join(" "),
            DUFFEL_API_BASE_URL: `http://127.0.0.1:${inject("supplierApiPort")}`,
            DUFFEL_API_TOKEN: "test-duffel-token",
            LITEAPI_DATA_BASE_URL: `http://127.0.0.1:${inject("supplierApiPort")}`,
            LITEAPI_API_KEY: "test-liteapi-key",
            STRIPE_WEBHOOK_SECRETS: "whsec_test_stripe_secret",
            STRIPE_API_BASE_URL: `http://127.0.0.1:${inject("stripePort")}`,
            STRIPE_FAKE_API: `http://127.0.0.1:${inject("stripePort")}`,
            STRIPE_SECRET_KEY: "sk_test_engine",
            // A failure whose payment is not known yet waits this long for it (production: 10 min).
            COMPENSATION_PAYMENT_WAIT_MS: "4000",
            ACTION_SIGNING_KEY: "test-action-signing-key-0123456789abcdef",
            PUBLIC_BASE_URL: "https://engine.test",
            BOOKING_SITE_URL: "https://book.example.com",
            OPERATOR_TOKEN: "test-operator-token-0123456789abcdef",
            // The owner's admin: two accounts (tests/e2e/admin.test.mjs), default limits.
            ADMIN_ACCOUNTS: [adminEntry("owner", "test-admin-password-1"), adminEntry("second", "test-admin-password-2")].join(","),
            UNSUBSCRIBE_SIGNING_KEY: "test-unsubscribe-signing-key-0123456789abcdef",
            RESEND_WEBHOOK_SECRETS: "whsec_dGVzdC1yZXNlbmQtd2ViaG9vay1zZWNyZXQtMDEyMzQ1",
            MARKETING_DAILY_CAP: "3",
            MARKETING_PER_PERSON_PER_DAY: "1",
            // Outbound webhooks: the local receiver is plain http on loopback; retries in seconds
            // (production: 60 s × 3ⁿ), a short time bound for the "slow" receiver.
            WEBHOOK_RECEIVER: `http://127.0.0.1:${inject("webhookReceiverPort")}`,
            WEBHOOK_ALLOW_HTTP_LOOPBACK: "true",
            WEBHOOK_RETRY_BASE_S: "1",
            WEBHOOK_RETRY_FACTOR: "1",
            WEBHOOK_RETRY_CAP_S: "2",
            WEBHOOK_MAX_ATTEMPTS: "4",
            WEBHOOK_TIMEOUT_MS: "1500",
            // No daily digest in these runs (it would add an owner email to whichever test sweeps
            // first); the owner's loops run (vitest.loops.config.mjs) sends it at hour 0 UTC.
            DIGEST_HOUR: "off",
            // Guests' replies (tests/e2e/replies.test.mjs): reply addresses on this domain, a small
            // day's bound of unmatched mail so its refusal is reachable.
            REPLY_DOMAIN: "reply.engine.test",
            REPLY_SIGNING_KEY: "test-reply-signing-key-0123456789abcdef",
            INBOUND_UNMATCHED_PER_DAY: "6",
            ...bindings(inject),
          },
          // The main provider, wrapped: an RPC service with the send_email binding's `send()`,
          // forwarding to the real local send_email binding except for recipients whose address
          // asks for a failure (`+daily-limit@`, `+suppressed@`, `+fail-2@`, …).
          // Tests put Cloudflare Email Service delivery events on their queue through this producer
          // (in production the event subscription is the producer).
          queueProducers: { EMAIL_EVENTS: { queueName: "booking-email-email-events" } },
          serviceBindings: {
            EMAIL: { name: "email-with-faults", entrypoint: "EmailWithFaults" },
          },
          // The owner route: a send_email binding restricted to the owner's address, for owner
          // alerts while every guest route is paused (as in wrangler.toml).
          email: { send_email: [{ name: "OWNER_ROUTE", destination_address: "owner@example.com" }] },
          workers: [
            {
              name: "email-with-faults",
              modules: true,
              script: readFileSync("tests/e2e/email-with-faults.mjs", "utf8"),
              compatibilityDate: "2026-11-01",
              email: { send_email: [{ name: "REAL_EMAIL" }] },
            },
          ],
        },
      })),
    ],
    test: {
      globalSetup: ["./tests/e2e/global-setup.mjs"],
      // Every test file: migrations first; after it, every calendar part it caused is parsed.
      setupFiles: ["./tests/e2e/apply-migrations.mjs", "./tests/e2e/calendars-parse.mjs"],
      include,
      testTimeout: 60_000,
      hookTimeout: 60_000,
      ...test,
    },
  };
}
