// The outbound webhooks benchmark (bench/webhooks.bench.mjs) inside workerd with
// @cloudflare/vitest-plugin: the real Rust Worker (./wrangler.toml, build/ as it is), its D1 and its
// Cloudflare Queues (producer, consumer, dead letter queue, Email Service events queue), delivering
// to the local receiver of the tests (tests/e2e/webhook-receiver.mjs: verifies every signature).
// bench/webhooks.mjs runs it and prints the table.
import { join } from "node:path";
import { benchConfig } from "./bench-config.mjs";
import { root } from "./vitest-bench.mjs";

export default benchConfig({
  include: "bench/webhooks.bench.mjs",
  bindings: (inject) => ({
    BENCH_WEBHOOK_EVENTS: process.env.BENCH_WEBHOOK_EVENTS ?? "1000",
    WEBHOOK_RECEIVER: `http://127.0.0.1:${inject("webhookReceiverPort")}`,
    WEBHOOK_ALLOW_HTTP_LOOPBACK: "true",
    OPERATOR_TOKEN: "bench-operator-token",
  }),
  miniflare: { queueProducers: { EMAIL_EVENTS: { queueName: "booking-email-email-events" } } },
  test: { globalSetup: [join(root, "bench", "webhooks.setup.mjs")], testTimeout: 900_000 },
});
