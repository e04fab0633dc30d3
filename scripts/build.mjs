// Builds the Worker: `worker-build --release` with local tools (it would otherwise download
// wasm-bindgen, esbuild and wasm-opt, which an offline machine cannot do).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { homedir } from "node:os";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cargoBin = process.env.CARGO_HOME ? join(process.env.CARGO_HOME, "bin") : join(homedir(), ".cargo", "bin");
const bin = (name) => join(root, "node_modules", ".bin", name);

const env = {
  ...process.env,
  PATH: `${join(root, "node_modules", ".bin")}:${cargoBin}:${process.env.PATH}`,
  WASM_BINDGEN_BIN: process.env.WASM_BINDGEN_BIN ?? join(cargoBin, "wasm-bindgen"),
  ESBUILD_BIN: process.env.ESBUILD_BIN ?? bin("esbuild"),
  WASM_OPT_BIN: process.env.WASM_OPT_BIN ?? bin("wasm-opt"),
};
for (const key of ["WASM_BINDGEN_BIN", "ESBUILD_BIN", "WASM_OPT_BIN"]) {
  if (!existsSync(env[key])) {
    console.error(`build: ${key} points at ${env[key]}, which does not exist. Run \`npm run setup\` first.`);
    process.exit(1);
  }
}
const workerBuild = join(cargoBin, "worker-build");
const r = spawnSync(existsSync(workerBuild) ? workerBuild : "worker-build", ["--release"], { cwd: root, env, stdio: "inherit" });
if (r.error) {
  console.error(`build: could not run worker-build: ${r.error.message}. Run \`npm run setup\` first.`);
  process.exit(1);
}
process.exit(r.status ?? 1);
