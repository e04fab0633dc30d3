// End-to-end tests inside workerd with Resend as the main provider (MAIN_PROVIDER = "resend"),
// pointed at the fake Resend API of tests/e2e/global-setup.mjs, and an SMTP failover server that
// refuses the engine's password (to exercise "SMTP credentials refused → pause SMTP + alert").
import { defineConfig } from "vitest/config";
import { engineTestConfig } from "./tests/e2e/engine-config.mjs";

export default defineConfig(() =>
  engineTestConfig({
    include: ["tests/e2e-resend/**/*.test.mjs"],
    bindings: (inject) => ({
      MAIN_PROVIDER: "resend",
      RESEND_API_KEY: "test-resend-key",
      RESEND_BASE_URL: `http://127.0.0.1:${inject("resendPort")}`,
      SMTP_PORT: String(inject("authSmtpPort")),
      SMTP_USERNAME: "engine",
      SMTP_PASSWORD: "wrong-password",
    }),
  }),
);
