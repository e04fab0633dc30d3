// `npm run build`: `worker-build --release` with local tools (it would otherwise download
// wasm-bindgen, esbuild and wasm-opt). Skips the build when build/ is newer than every source, so
// wrangler's own [build] call right after `npm start`'s is a no-op.
import { existsSync, statSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { root, cargoBin, nodeBin, run, step } from "./lib.mjs";

function newest(path) {
  if (!existsSync(path)) return 0;
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const inputs = ["src", "templates", "Cargo.toml", "Cargo.lock", ".cargo"].map((p) => join(root, p));
const output = join(root, "build", "index_bg.wasm");
const force = process.argv.includes("--force");

await step("build the Worker (Rust → wasm)", () => {
  if (!force && existsSync(output) && statSync(output).mtimeMs > Math.max(...inputs.map(newest))) {
    return "up to date";
  }
  const env = {
    WASM_BINDGEN_BIN: process.env.WASM_BINDGEN_BIN ?? join(cargoBin, "wasm-bindgen"),
    ESBUILD_BIN: process.env.ESBUILD_BIN ?? join(nodeBin, "esbuild"),
    WASM_OPT_BIN: process.env.WASM_OPT_BIN ?? join(nodeBin, "wasm-opt"),
  };
  for (const [key, path] of Object.entries(env)) {
    if (!existsSync(path)) throw new Error(`${key} points at ${path}, which does not exist; run \`npm run setup\``);
  }
  run(join(cargoBin, "worker-build"), ["--release"], { env: { ...process.env, ...env, PATH: `${nodeBin}:${cargoBin}:${process.env.PATH}` } });
  const size = statSync(output).size;
  return `build/index_bg.wasm ${(size / 1024).toFixed(0)} KiB`;
});
