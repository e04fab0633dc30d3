// The outbound webhooks benchmark (bench/webhooks.bench.mjs) inside workerd with
// @cloudflare/vitest-plugin: the real Rust Worker (./wrangler.toml, build/ as it is), its D1 and its
// Cloudflare Queues (producer, consumer, dead letter queue, Email Service events queue), delivering
// to the local receiver of the tests (tests/e2e/webhook-receiver.mjs: verifies every signature).
// bench/webhooks.mjs runs it and prints the table.
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export default defineConfig(async () => {
  const migrations = await readD1Migrations(join(root, "migrations"));
  return {
  root,
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: join(root, "wrangler.toml") },
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: migrations,
          BENCH_WEBHOOK_EVENTS: process.env.BENCH_WEBHOOK_EVENTS ?? "1000",
          WEBHOOK_RECEIVER: `http://127.0.0.1:${inject("webhookReceiverPort")}`,
          WEBHOOK_ALLOW_HTTP_LOOPBACK: "true",
          OPERATOR_TOKEN: "bench-operator-token",
          LITEAPI_WEBHOOK_TOKEN: "bench-token",
          OWNER_EMAIL: "owner@example.com",
          SENDER_EMAIL: "bookings@example.com",
          SMTP_HOST: "",
        },
        queueProducers: { EMAIL_EVENTS: { queueName: "booking-email-email-events" } },
      },
    })),
  ],
  test: {
    include: ["bench/webhooks.bench.mjs"],
    globalSetup: [join(root, "bench", "webhooks.setup.mjs")],
    testTimeout: 900_000,
    hookTimeout: 120_000,
  },
  };
});
