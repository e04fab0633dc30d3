// `npm run build`: Rust → wasm → the Worker module in build/, with tools that are already installed
// (cargo, the wasm-bindgen CLI at the version Cargo.lock pins, esbuild and binaryen's wasm-opt from
// npm). It does what `worker-build --release` 0.8.7 does for a module Worker without panic=unwind
// (https://github.com/cloudflare/workers-rs/tree/main/worker-build), step for step, so the output
// is the same Worker; compiling worker-build itself from crates.io took ~4 minutes of a cold
// machine's setup and bought nothing else:
//
//   1. cargo build --lib --release --target wasm32-unknown-unknown (WASM_BINDGEN_USE_JS_SYS=1, as
//      worker-build sets it: the wasm-bindgen macros then use js_sys's futures);
//   2. wasm-bindgen --target module --out-name index --no-typescript, with the reset-state
//      function and abort handler the shim below relies on;
//   3. wasm-opt with the optimisation level of Cargo.toml's
//      [package.metadata.wasm-pack.profile.release] `wasm-opt` (worker-build's default `-O`) and
//      the features workerd supports;
//   4. the `producers` custom section gains `sdk: workers-rs <version>` (Cloudflare's usage
//      metadata);
//   5. src/shim.mjs (the default entrypoint over the Rust exports, recovery after a fatal wasm
//      error) and a wrapper per exported class, bundled with esbuild into build/index.js.
//
// Skips everything when build/ is newer than every source, so wrangler's own [build] call right
// after `npm start`'s is a no-op. `--force` rebuilds.
import { existsSync, statSync, readdirSync, readFileSync, writeFileSync, mkdirSync, rmSync, renameSync, copyFileSync } from "node:fs";
import { join } from "node:path";
import { root, cargoBin, nodeBin, run, step } from "./lib.mjs";

/** The worker-build release whose output this script reproduces (its version goes into `producers`). */
const WORKER_BUILD_COMPAT = "0.8.7";
const CRATE = "booking_email_engine";

function newest(path) {
  if (!existsSync(path)) return 0;
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/** Cargo's target directory (CARGO_TARGET_DIR or ./target). */
function targetDir() {
  return process.env.CARGO_TARGET_DIR ?? join(root, "target");
}

/** wasm-opt arguments: Cargo.toml's `wasm-opt = [...]` for the release profile, else `-O`; `false` = none. */
function wasmOptArgs() {
  const toml = readFileSync(join(root, "Cargo.toml"), "utf8");
  const section = /\[package\.metadata\.wasm-pack\.profile\.release\]([\s\S]*?)(?:\n\[|$)/.exec(toml);
  const line = section && /^\s*wasm-opt\s*=\s*(.+)$/m.exec(section[1]);
  if (!line) return ["-O"];
  const value = line[1].trim();
  if (value === "false") return null;
  if (value === "true") return ["-O"];
  return JSON.parse(value);
}

// ---------------------------------------------------------------------------------------------
// The `producers` custom section (https://github.com/WebAssembly/tool-conventions/blob/main/ProducersSection.md):
// a vector of fields, each a name and a vector of (name, version) strings, all LEB128-prefixed.

function readU32(bytes, at) {
  let result = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++];
    result |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result >>> 0, at];
    shift += 7;
  }
}

function u32(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return Buffer.from(out);
}

const str = (s) => Buffer.concat([u32(Buffer.byteLength(s)), Buffer.from(s)]);

/** Adds `sdk: workers-rs <version>` to the module's producers section (appended when absent). */
function addSdkProducer(wasm, version) {
  let at = 8;
  let section = null;
  while (at < wasm.length) {
    const start = at;
    const id = wasm[at++];
    let size;
    [size, at] = readU32(wasm, at);
    const contentStart = at;
    const end = at + size;
    if (id === 0) {
      let nameLen;
      let p;
      [nameLen, p] = readU32(wasm, at);
      if (wasm.subarray(p, p + nameLen).toString() === "producers") section = { start, end, contentStart: p + nameLen, contentEnd: end };
    }
    at = end;
    void contentStart;
  }
  const fields = [];
  if (section) {
    let p = section.contentStart;
    let count;
    [count, p] = readU32(wasm, p);
    for (let i = 0; i < count; i++) {
      let len;
      [len, p] = readU32(wasm, p);
      const field = wasm.subarray(p, p + len).toString();
      p += len;
      let n;
      [n, p] = readU32(wasm, p);
      for (let j = 0; j < n; j++) {
        [len, p] = readU32(wasm, p);
        const name = wasm.subarray(p, p + len).toString();
        p += len;
        [len, p] = readU32(wasm, p);
        const ver = wasm.subarray(p, p + len).toString();
        p += len;
        fields.push({ field, name, version: ver });
      }
    }
  }
  if (!fields.some((e) => e.field === "sdk" && e.name === "workers-rs")) fields.push({ field: "sdk", name: "workers-rs", version });
  // Group by field, in first-seen order.
  const order = [];
  const byField = new Map();
  for (const e of fields) {
    if (!byField.has(e.field)) {
      byField.set(e.field, []);
      order.push(e.field);
    }
    byField.get(e.field).push(e);
  }
  const body = [str("producers"), u32(order.length)];
  for (const f of order) {
    const entries = byField.get(f);
    body.push(str(f), u32(entries.length));
    for (const e of entries) body.push(str(e.name), str(e.version));
  }
  const content = Buffer.concat(body);
  const encoded = Buffer.concat([Buffer.from([0]), u32(content.length), content]);
  if (!section) return Buffer.concat([wasm, encoded]);
  return Buffer.concat([wasm.subarray(0, section.start), encoded, wasm.subarray(section.end)]);
}

// ---------------------------------------------------------------------------------------------
// The JS side: src/shim.mjs plus one wrapper per class Rust exports.

/** Each `export` declaration of wasm-bindgen's module text. */
function exportDecls(content) {
  const out = [];
  let i = content.indexOf("export ");
  while (i !== -1) {
    const before = i === 0 ? " " : content[i - 1];
    if (/\s|;|\}/.test(before)) out.push(content.slice(i));
    i = content.indexOf("export ", i + 1);
  }
  return out;
}

function classWrappers(indexJs) {
  let out = "";
  for (const decl of exportDecls(indexJs)) {
    const m = /^export class ([^{]*)\{/.exec(decl);
    if (m) out += `export const ${m[1].trim()} = resilient(rust.${m[1].trim()});\n`;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

const inputs = ["src", "templates", "Cargo.toml", "Cargo.lock", ".cargo", "scripts/build.mjs"].map((p) => join(root, p));
const outDir = join(root, "build");
const output = join(outDir, "index_bg.wasm");
const force = process.argv.includes("--force");

await step("build the Worker (Rust → wasm)", () => {
    if (!force && existsSync(output) && statSync(output).mtimeMs > Math.max(...inputs.map(newest))) {
      return "up to date";
    }
    const tools = {
      WASM_BINDGEN_BIN: process.env.WASM_BINDGEN_BIN ?? join(cargoBin, "wasm-bindgen"),
      ESBUILD_BIN: process.env.ESBUILD_BIN ?? join(nodeBin, "esbuild"),
      WASM_OPT_BIN: process.env.WASM_OPT_BIN ?? join(nodeBin, "wasm-opt"),
    };
    for (const [key, path] of Object.entries(tools)) {
      if (!existsSync(path)) throw new Error(`${key} points at ${path}, which does not exist; run \`npm run setup\``);
    }
    const env = { ...process.env, WASM_BINDGEN_USE_JS_SYS: "1", PATH: `${nodeBin}:${cargoBin}:${process.env.PATH}` };

    // 1. Rust → wasm.
    run("cargo", ["build", "--lib", "--release", "--target", "wasm32-unknown-unknown"], { env });
    const linked = join(targetDir(), "wasm32-unknown-unknown", "release", `${CRATE}.wasm`);

    // Everything is written to a staging folder and swapped in at the end, so a failed build never
    // leaves a half-written build/ for wrangler to serve.
    const staging = join(outDir, ".tmp");
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });

    // 2. JS bindings.
    run(tools.WASM_BINDGEN_BIN, [
      linked, "--out-dir", staging, "--no-typescript", "--target", "module", "--out-name", "index",
      "--experimental-reset-state-function", "--force-enable-abort-handler",
    ], { env });

    // 3. wasm-opt with Cargo.toml's passes (names kept unless those passes strip them).
    const wasm = join(staging, "index_bg.wasm");
    const optArgs = wasmOptArgs();
    if (optArgs) {
      const features = ["mutable-globals", "sign-ext", "nontrapping-float-to-int", "bulk-memory", "multivalue", "reference-types", "exception-handling"];
      const tmp = join(staging, "index_bg.wasm-opt.wasm");
      run(tools.WASM_OPT_BIN, [wasm, "-o", tmp, ...optArgs, ...features.map((f) => `--enable-${f}`), ...(optArgs.includes("--strip-debug") ? [] : ["--debuginfo"])], { env });
      renameSync(tmp, wasm);
    }

    // 4. producers metadata.
    writeFileSync(wasm, addSdkProducer(readFileSync(wasm), WORKER_BUILD_COMPAT));

    // 5. The shim, bundled.
    const indexJs = readFileSync(join(staging, "index.js"), "utf8");
    const shim = readFileSync(join(root, "src", "shim.mjs"), "utf8") + classWrappers(indexJs);
    writeFileSync(join(staging, "shim.js"), shim);
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    const cargo = readFileSync(join(root, "Cargo.toml"), "utf8");
    const description = /^description\s*=\s*"([^"]*)"/m.exec(cargo)?.[1];
    const version = /^version\s*=\s*"([^"]*)"/m.exec(cargo)?.[1];
    writeFileSync(
      join(staging, "package.json"),
      JSON.stringify(
        { description, files: ["index_bg.wasm", "index.js", "index.d.ts"], main: "index.js", name: pkg.name, sideEffects: ["./index.js"], type: "module", version },
        null,
        2,
      ),
    );
    run(tools.ESBUILD_BIN, ["--external:./index_bg.wasm", "--external:cloudflare:*", "--format=esm", "--bundle", "./shim.js", "--outfile=index.js", "--allow-overwrite", "--minify", "--log-level=warning"], { cwd: staging, env });
    const bundled = join(staging, "index.js");
    writeFileSync(bundled, readFileSync(bundled, "utf8").replace("import source ", "import "));
    rmSync(join(staging, "shim.js"));
    rmSync(join(staging, "snippets"), { recursive: true, force: true });
    mkdirSync(join(staging, "worker"), { recursive: true });
    writeFileSync(
      join(staging, "worker", "shim.mjs"),
      "// Use index.js directly, this file provided for backwards compat\n// with former shim.mjs only.\nexport * from '../index.js';\nexport { default } from '../index.js';\n",
    );

    // Swap in: index_bg.wasm last, so its mtime says "up to date" only for a whole build.
    for (const name of ["index.js", "package.json"]) copyFileSync(join(staging, name), join(outDir, name));
    mkdirSync(join(outDir, "worker"), { recursive: true });
    copyFileSync(join(staging, "worker", "shim.mjs"), join(outDir, "worker", "shim.mjs"));
    renameSync(wasm, output);
    rmSync(staging, { recursive: true, force: true });
    return `build/index_bg.wasm ${(statSync(output).size / 1024).toFixed(0)} KiB`;
});
