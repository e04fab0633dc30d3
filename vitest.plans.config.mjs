// Query plans inside workerd (tests/e2e-plans): the end-to-end configuration
// (tests/e2e/engine-config.mjs) with the counting Worker of bench/cost/entry.mjs as the main
// module, which keeps every SQL text the engine prepares.
import { defineConfig } from "vitest/config";
import { engineTestConfig } from "./tests/e2e/engine-config.mjs";

export default defineConfig(() =>
  engineTestConfig({ include: ["tests/e2e-plans/**/*.test.mjs"], main: "./bench/cost/entry.mjs" }),
);
