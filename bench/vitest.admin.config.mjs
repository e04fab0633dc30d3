// The admin benchmark (bench/admin.bench.mjs) inside workerd with @cloudflare/vitest-plugin: the
// real Rust Worker (./wrangler.toml, build/ as it is) and its D1. bench/admin.mjs runs it and
// prints the table.
import { join } from "node:path";
import { benchConfig } from "./bench-config.mjs";
import { root } from "./vitest-bench.mjs";
import { adminEntry } from "../tests/e2e/engine-config.mjs";

export default benchConfig({
  include: "bench/admin.bench.mjs",
  bindings: () => ({
    // 100,000 iterations: what `npm run admin-password` makes.
    ADMIN_ACCOUNTS: adminEntry("bench", "bench-admin-password"),
    ADMIN_LOGIN_MAX_PER_ACCOUNT: "100000",
    ADMIN_LOGIN_MAX_PER_IP: "100000",
  }),
  test: { setupFiles: [join(root, "tests", "e2e", "apply-migrations.mjs")], testTimeout: 900_000 },
});
