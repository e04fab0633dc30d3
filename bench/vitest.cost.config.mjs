// The cost benchmark (bench/cost.bench.mjs) inside workerd: the end-to-end tests' configuration
// (tests/e2e/engine-config.mjs: the real Rust Worker, its Workflow, Durable Object, D1 and local
// servers), with the counting Worker of bench/cost/entry.mjs as the main module.
import { defineConfig } from "vitest/config";
import { engineTestConfig } from "../tests/e2e/engine-config.mjs";

export default defineConfig(() =>
  engineTestConfig({
    include: ["bench/cost.bench.mjs"],
    main: "./bench/cost/entry.mjs",
    // BENCH_COST_TRACE=1: every D1 round trip of each scenario printed (tag and statements).
    bindings: () => (process.env.BENCH_COST_TRACE ? { BENCH_COST_TRACE: "1" } : {}),
    test: { testTimeout: 300_000 },
  }),
);
