// End-to-end tests inside workerd with Cloudflare Email Service (the wrapped send_email binding) as
// the main provider. Shared settings: tests/e2e/engine-config.mjs.
import { defineConfig } from "vitest/config";
import { engineTestConfig } from "./tests/e2e/engine-config.mjs";

export default defineConfig(() => engineTestConfig({ include: ["tests/e2e/**/*.test.mjs"] }));
