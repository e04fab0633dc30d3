// The vitest configuration the in-workerd benchmarks share (bench/vitest.{bench,admin,sweeper,
// webhooks}.config.mjs): @cloudflare/vitest-plugin with the real Rust Worker of a wrangler.toml
// (./wrangler.toml and build/ as they are, unless told otherwise), the D1 migrations beside it as
// TEST_MIGRATIONS, and the bindings every benchmark sets; each config adds its own.
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { dirname, join } from "node:path";
import { root } from "./vitest-bench.mjs";

/**
 * One benchmark's vitest config.
 * @param {object} o
 * @param {string} o.include the benchmark file, relative to the repository root
 * @param {string} [o.configPath] the wrangler.toml to run (its folder's migrations/ are applied)
 * @param {(inject: (key: string) => unknown) => Record<string, unknown>} [o.bindings] the
 *   benchmark's own bindings, given vitest's `inject` (values of a globalSetup's `provide`)
 * @param {object} [o.miniflare] more miniflare options (e.g. `queueProducers`)
 * @param {object} [o.test] more vitest `test` options (`testTimeout` in ms, `setupFiles`, …)
 */
export function benchConfig({ include, configPath = join(root, "wrangler.toml"), bindings = () => ({}), miniflare = {}, test = {} }) {
  return defineConfig(async () => {
    const migrations = await readD1Migrations(join(dirname(configPath), "migrations"));
    return {
      root,
      plugins: [
        cloudflareTest(({ inject }) => ({
          wrangler: { configPath },
          miniflare: {
            bindings: {
              TEST_MIGRATIONS: migrations,
              LITEAPI_WEBHOOK_TOKEN: "bench-token",
              OWNER_EMAIL: "owner@example.com",
              SENDER_EMAIL: "bookings@example.com",
              // No SMTP failover: every send goes through the EMAIL binding.
              SMTP_HOST: "",
              ...bindings(inject),
            },
            ...miniflare,
          },
        })),
      ],
      test: { include: [include], hookTimeout: 120_000, ...test },
    };
  });
}
