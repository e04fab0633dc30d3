// End-to-end tests inside workerd with COMPENSATION_REFUND_POLICY = "automatic": a paid booking the
// supplier failed is refunded by the journey itself (the default, "owner", is tested by
// vitest.config.mjs). Same Worker, same local servers (tests/e2e/global-setup.mjs).
import { defineConfig } from "vitest/config";
import { engineTestConfig } from "./tests/e2e/engine-config.mjs";

export default defineConfig(() =>
  engineTestConfig({
    include: ["tests/e2e-automatic/**/*.test.mjs"],
    bindings: () => ({ COMPENSATION_REFUND_POLICY: "automatic" }),
  }),
);
