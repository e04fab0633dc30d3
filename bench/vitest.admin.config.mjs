// The admin benchmark (bench/admin.bench.mjs) inside workerd with @cloudflare/vitest-plugin: the
// real Rust Worker (./wrangler.toml, build/ as it is) and its D1. bench/admin.mjs runs it and
// prints the table.
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { adminEntry } from "../tests/e2e/engine-config.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export default defineConfig(async () => {
  const migrations = await readD1Migrations(join(root, "migrations"));
  return {
    root,
    plugins: [
      cloudflareTest({
        wrangler: { configPath: join(root, "wrangler.toml") },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            LITEAPI_WEBHOOK_TOKEN: "bench-token",
            OWNER_EMAIL: "owner@example.com",
            SENDER_EMAIL: "bookings@example.com",
            SMTP_HOST: "",
            // 100,000 iterations: what `npm run admin-password` makes.
            ADMIN_ACCOUNTS: adminEntry("bench", "bench-admin-password"),
            ADMIN_LOGIN_MAX_PER_ACCOUNT: "100000",
            ADMIN_LOGIN_MAX_PER_IP: "100000",
          },
        },
      }),
    ],
    test: {
      include: ["bench/admin.bench.mjs"],
      setupFiles: [join(root, "tests", "e2e", "apply-migrations.mjs")],
      testTimeout: 900_000,
      hookTimeout: 120_000,
    },
  };
});
