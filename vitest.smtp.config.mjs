// End-to-end tests inside workerd whose SMTP failover is the scripted server of
// tests/e2e/scripted-smtp.mjs (replies to the final dot as real servers send them, a refused
// sender, lost connections), with short per-step limits so a slow final reply is longer than a
// command's limit and shorter than its own. Shared settings: tests/e2e/engine-config.mjs.
import { defineConfig } from "vitest/config";
import { engineTestConfig } from "./tests/e2e/engine-config.mjs";

export default defineConfig(() =>
  engineTestConfig({
    include: ["tests/e2e-smtp/**/*.test.mjs"],
    bindings: (inject) => ({
      SMTP_PORT: String(inject("scriptedSmtpPort")),
      SCRIPTED_SMTP_API: `http://127.0.0.1:${inject("scriptedSmtpControlPort")}`,
      // Every command may take 2 s, the reply to the final dot 8 s (the scripted slow reply
      // takes 3 s), the whole conversation 30 s.
      SMTP_TIMEOUT_MS: "2000",
      SMTP_GREETING_TIMEOUT_MS: "2000",
      SMTP_DATA_TIMEOUT_MS: "2000",
      SMTP_DATA_BLOCK_TIMEOUT_MS: "2000",
      SMTP_FINAL_REPLY_TIMEOUT_MS: "8000",
      SMTP_CONVERSATION_MAX_MS: "30000",
    }),
  }),
);
