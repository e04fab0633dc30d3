// End-to-end tests inside workerd whose SMTP failover is a real Postfix relay, started privately by
// tests/e2e-postfix/global-setup.mjs with its real restrictions (unknown recipients, a refused
// sender, a content verdict, a size limit, a temporary refusal). Shared settings:
// tests/e2e/engine-config.mjs.
import { defineConfig } from "vitest/config";
import { engineTestConfig } from "./tests/e2e/engine-config.mjs";

export default defineConfig(() =>
  engineTestConfig({
    include: ["tests/e2e-postfix/**/*.test.mjs"],
    bindings: (inject) => ({
      SMTP_PORT: String(inject("postfixPort")),
      POSTFIX_API: `http://127.0.0.1:${inject("postfixControlPort")}`,
    }),
    test: { globalSetup: ["./tests/e2e/global-setup.mjs", "./tests/e2e-postfix/global-setup.mjs"] },
  }),
);
