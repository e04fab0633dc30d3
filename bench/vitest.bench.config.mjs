// The outbox benchmark (bench/outbox.bench.mjs) inside workerd with @cloudflare/vitest-plugin: the
// real Rust Worker and its Outbox Durable Object, D1 and the local send_email binding, as in the
// end-to-end tests (vitest.config.mjs) but without the test SMTP server and fake supplier APIs,
// which an alarm that sends one client email through EMAIL does not need.
//
// bench/run.mjs points BENCH_WRANGLER_CONFIG at its snapshot of the build (so a rebuild by someone
// else during the run changes nothing); alone, `vitest run --config bench/vitest.bench.config.mjs`
// uses ./wrangler.toml and build/ as they are.
import { benchConfig } from "./bench-config.mjs";

export default benchConfig({
  include: "bench/outbox.bench.mjs",
  configPath: process.env.BENCH_WRANGLER_CONFIG,
  bindings: () => ({
    BENCH_OUTBOX_SIZES: process.env.BENCH_OUTBOX_SIZES ?? "0,1000,10000,100000",
    BENCH_OUTBOX_REPEATS: process.env.BENCH_OUTBOX_REPEATS ?? "3",
    // Production pacing: after the measured send the client slot stays closed.
    OUTBOX_GAP_MIN_MS: "150000",
    OUTBOX_GAP_MAX_MS: "160000",
  }),
  test: { testTimeout: 240_000 },
});
