// End-to-end tests inside workerd whose SMTP failover asks for STARTTLS of a server whose
// certificate the runtime does not trust (tests/e2e-tls/global-setup.mjs). Shared settings:
// tests/e2e/engine-config.mjs.
import { defineConfig } from "vitest/config";
import { engineTestConfig } from "./tests/e2e/engine-config.mjs";

export default defineConfig(() =>
  engineTestConfig({
    include: ["tests/e2e-tls/**/*.test.mjs"],
    bindings: (inject) => ({
      SMTP_PORT: String(inject("tlsSmtpPort")),
      SMTP_TLS: "starttls",
      TLS_SMTP_API: `http://127.0.0.1:${inject("tlsSmtpControlPort")}`,
    }),
    test: { globalSetup: ["./tests/e2e/global-setup.mjs", "./tests/e2e-tls/global-setup.mjs"] },
  }),
);
