// The sweeper benchmark (bench/sweeper.bench.mjs) inside workerd with @cloudflare/vitest-plugin:
// the real Rust Worker (./wrangler.toml, build/ as they are), its D1, Workflow and outbox.
// bench/sweeper.mjs runs it and prints the table; sizes through BENCH_SWEEPER_SIZES / _DUE.
import { benchConfig } from "./bench-config.mjs";

export default benchConfig({
  include: "bench/sweeper.bench.mjs",
  bindings: () => ({
    BENCH_SWEEPER_SIZES: process.env.BENCH_SWEEPER_SIZES ?? "0,10000,100000",
    BENCH_SWEEPER_DUE: process.env.BENCH_SWEEPER_DUE ?? "0,10",
  }),
  test: { testTimeout: 600_000 },
});
