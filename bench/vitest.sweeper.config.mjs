// The sweeper benchmark (bench/sweeper.bench.mjs) inside workerd with @cloudflare/vitest-plugin:
// the real Rust Worker (./wrangler.toml, build/ as they are), its D1, Workflow and outbox.
// bench/sweeper.mjs runs it and prints the table; sizes through BENCH_SWEEPER_SIZES / _DUE.
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export default defineConfig(async () => ({
  root,
  plugins: [
    cloudflareTest({
      wrangler: { configPath: join(root, "wrangler.toml") },
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: await readD1Migrations(join(root, "migrations")),
          BENCH_SWEEPER_SIZES: process.env.BENCH_SWEEPER_SIZES ?? "0,10000,100000",
          BENCH_SWEEPER_DUE: process.env.BENCH_SWEEPER_DUE ?? "0,10",
          LITEAPI_WEBHOOK_TOKEN: "bench-token",
          OWNER_EMAIL: "owner@example.com",
          SENDER_EMAIL: "bookings@example.com",
          SMTP_HOST: "",
        },
      },
    }),
  ],
  test: { include: ["bench/sweeper.bench.mjs"], testTimeout: 600_000, hookTimeout: 120_000 },
}));
