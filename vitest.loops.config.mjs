// End-to-end tests inside workerd of what waits for the owner (tests/e2e-loops/): refund
// reminders, the outbox's backlog forecast and catch-up, hotel time repaired by the sweeper, the
// deliveries page, hold recalls, the daily digest (due from 00:00 UTC, so any run time sends it)
// and retention. An unanswered hold is dismissed here (HOLD_UNANSWERED_ACTION = dismiss; the
// default, keep, is what the other runs use). Same Worker, same local servers.
import { defineConfig } from "vitest/config";
import { engineTestConfig } from "./tests/e2e/engine-config.mjs";

export default defineConfig(() =>
  engineTestConfig({
    include: ["tests/e2e-loops/**/*.test.mjs"],
    bindings: () => ({ DIGEST_HOUR: "0", OWNER_TIME_ZONE: "UTC", HOLD_UNANSWERED_ACTION: "dismiss" }),
  }),
);
