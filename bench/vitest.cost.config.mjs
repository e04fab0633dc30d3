// The cost benchmark (bench/cost.bench.mjs) inside workerd: the end-to-end tests' configuration
// (tests/e2e/engine-config.mjs: the real Rust Worker, its Workflow, Durable Object, D1 and local
// servers), with the counting Worker of bench/cost/entry.mjs as the main module, and a probe of
// the workerd processes' CPU time served from outside workerd (bench/cost/cpu-probe.mjs).
import { defineConfig } from "vitest/config";
import { engineTestConfig } from "../tests/e2e/engine-config.mjs";

export default defineConfig(() =>
  engineTestConfig({
    include: ["bench/cost.bench.mjs"],
    main: "./bench/cost/entry.mjs",
    bindings: (inject) => ({
      CPU_PROBE: `http://127.0.0.1:${inject("cpuProbePort")}`,
      // A client slot a day apart: client emails go out only when the benchmark opens a slot, so
      // none is sent inside another scenario's window (owner alerts still go out at once).
      OUTBOX_GAP_MIN_MS: "86400000",
      OUTBOX_GAP_MAX_MS: "86400001",
      // BENCH_COST_TRACE=1: every D1 round trip of each scenario printed (tag and statements).
      ...(process.env.BENCH_COST_TRACE ? { BENCH_COST_TRACE: "1" } : {}),
      // BENCH_COST_REPEATS: repetitions per scenario for the CPU median (default 9).
      BENCH_COST_REPEATS: process.env.BENCH_COST_REPEATS ?? "9",
      // BENCH_COST_SIZE_BOOKINGS: complete journeys measured for the D1 size per 1,000 bookings.
      BENCH_COST_SIZE_BOOKINGS: process.env.BENCH_COST_SIZE_BOOKINGS ?? "50",
    }),
    test: {
      globalSetup: ["./tests/e2e/global-setup.mjs", "./bench/cost/cpu-probe.mjs"],
      testTimeout: 600_000,
    },
  }),
);
