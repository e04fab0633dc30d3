// `npm run setup` (also the first half of `npm start`, `npm test`, `npm run bench`): installs
// whatever is missing for building and running the Worker offline, and skips what is there.
//
// - npm packages (Node 22, wrangler + workerd, esbuild, binaryen's wasm-opt, maildev, vitest,
//   playwright-core for the admin's browser test);
// - Chromium for the browser test (Debian's `chromium`, or CHROMIUM_PATH): installed with apt-get
//   when missing and running as root;
// - Postfix for the SMTP failover test against a real relay (Debian's `postfix`), likewise;
// - the wasm32-unknown-unknown Rust target;
// - wasm-bindgen-cli at exactly the version Cargo.lock pins (scripts/build.mjs runs it; the
//   generated bindings must match the wasm-bindgen crate the Worker was compiled with);
// - .dev.vars from .dev.vars.example for `wrangler dev`.
import { existsSync, statSync, readFileSync, copyFileSync, appendFileSync, accessSync, constants } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { root, cargoBin, step, run, output } from "./lib.mjs";

function wasmBindgenVersion() {
  const lock = readFileSync(join(root, "Cargo.lock"), "utf8");
  const m = /\[\[package\]\]\nname = "wasm-bindgen"\nversion = "([^"]+)"/.exec(lock);
  if (!m) throw new Error("Cargo.lock has no wasm-bindgen entry");
  return m[1];
}

await step("npm packages (Node 22, wrangler, esbuild, wasm-opt, maildev, vitest, playwright-core)", () => {
  const marker = join(root, "node_modules", ".package-lock.json");
  const lock = join(root, "package-lock.json");
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs && existsSync(join(root, "node_modules", ".bin", "wrangler"))) {
    return "already installed";
  }
  // `npm install`, not `npm ci`: an optional dependency of vite that this registry does not serve
  // (napi-windows-process-start-time) is absent from the lock file, which `npm ci` refuses. With the
  // lock file committed, `npm install` installs exactly its versions and leaves it unchanged.
  // A fresh clone: `npm ci` installs exactly the lock's tree without resolving it again (the
  // faster of the two). Over an older node_modules, `npm install` updates what changed.
  if (!existsSync(join(root, "node_modules"))) {
    run("npm", ["ci", "--no-audit", "--no-fund"]);
    return "installed (npm ci)";
  }
  run("npm", ["install", "--no-audit", "--no-fund"]);
  return "installed";
});

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
await step(`Chromium for the browser test (${CHROMIUM})`, () => {
  const executable = (path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (executable(CHROMIUM)) return "already installed";
  if (process.env.CHROMIUM_PATH) {
    throw new Error(`CHROMIUM_PATH=${process.env.CHROMIUM_PATH} is not an executable file; point it at a Chromium or Chrome binary, or unset it to use Debian's /usr/bin/chromium`);
  }
  if (typeof process.getuid !== "function" || process.getuid() !== 0) {
    // Only the browser test needs it: `npm start` goes on, `npm test` stops here.
    if (/start\.mjs$/.test(process.argv[1] ?? "")) {
      return "missing (only npm test's browser test needs it): run `sudo apt-get install -y chromium`, or set CHROMIUM_PATH";
    }
    throw new Error("/usr/bin/chromium is missing: run `sudo apt-get install -y chromium` (Debian/Ubuntu), or set CHROMIUM_PATH to a Chromium/Chrome binary, and run again");
  }
  const install = () =>
    spawnSync("apt-get", ["install", "-y", "chromium"], {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  let r = install();
  if (r.error) throw new Error(`could not run apt-get (${r.error.message}); install Debian's chromium package, or set CHROMIUM_PATH`);
  if (r.status !== 0) {
    // Package lists missing or stale (a fresh machine): refresh them once, then try again.
    run("apt-get", ["update"]);
    r = install();
  }
  if (r.status !== 0 || !executable(CHROMIUM)) throw new Error(`apt-get install -y chromium exited with ${r.status} and ${CHROMIUM} is still missing`);
  return "installed with apt-get";
});

// Debian's Postfix for the SMTP failover test against a real relay (tests/e2e-postfix/): run as a
// private instance on a free port by that test, never as the machine's mail system. Installed
// with "No configuration" preseeded, so the package sets up no system instance of its own.
const POSTFIX = "/usr/sbin/postfix";
await step(`Postfix for the SMTP relay test (${POSTFIX})`, () => {
  if (existsSync(POSTFIX) && existsSync("/usr/share/postfix/master.cf.dist")) return "already installed";
  const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (!asRoot) {
    if (/start\.mjs$/.test(process.argv[1] ?? "")) {
      return "missing (only npm test's Postfix run needs it): run `sudo apt-get install -y postfix`";
    }
    throw new Error(`${POSTFIX} is missing: run \`sudo apt-get install -y postfix\` (Debian/Ubuntu; choose "No configuration"), and run again`);
  }
  const preseed = spawnSync("debconf-set-selections", {
    input: "postfix postfix/main_mailer_type select No configuration\n",
    encoding: "utf8",
  });
  if (preseed.error) console.log(`  (debconf-set-selections unavailable: ${preseed.error.message}; installing with the package's defaults)`);
  const install = () =>
    spawnSync("apt-get", ["install", "-y", "--no-install-recommends", "postfix"], {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  let r = install();
  if (r.error) throw new Error(`could not run apt-get (${r.error.message}); install Debian's postfix package`);
  if (r.status !== 0) {
    run("apt-get", ["update"]);
    r = install();
  }
  if (r.status !== 0 || !existsSync(POSTFIX)) throw new Error(`apt-get install -y postfix exited with ${r.status} and ${POSTFIX} is still missing`);
  return "installed with apt-get";
});

await step("Rust toolchain and the wasm32-unknown-unknown target", () => {
  if (!output("cargo", ["--version"])) {
    throw new Error("cargo is not on PATH; install Rust with rustup (https://rustup.rs) and run again");
  }
  const installed = output("rustup", ["target", "list", "--installed"]);
  if (installed === null) throw new Error("rustup is not on PATH; the wasm32 target is added through rustup");
  if (installed.split("\n").includes("wasm32-unknown-unknown")) return "already installed";
  run("rustup", ["target", "add", "wasm32-unknown-unknown"]);
  return "installed";
});

const bindgen = wasmBindgenVersion();
await step(`wasm-bindgen-cli ${bindgen} (matches Cargo.lock)`, () => {
  const have = output(join(cargoBin, "wasm-bindgen"), ["--version"]);
  if (have && have.split(/\s+/).includes(bindgen)) return "already installed";
  console.log("  compiling wasm-bindgen-cli from crates.io: about 5 minutes on 2 cores, once per machine");
  // No --locked: its locked webpki-roots is not on every registry mirror; unlocked resolves fine.
  run("cargo", ["install", "wasm-bindgen-cli", "--version", bindgen, "--force"]);
  return "installed";
});

await step(".dev.vars for wrangler dev", () => {
  const target = join(root, ".dev.vars");
  const example = readFileSync(join(root, ".dev.vars.example"), "utf8");
  if (!existsSync(target)) {
    copyFileSync(join(root, ".dev.vars.example"), target);
    return "created from .dev.vars.example";
  }
  // Keep the developer's values; add keys that newer versions of the example introduced.
  const keyOf = (line) => (/^\s*([A-Z0-9_]+)\s*=/.exec(line) ?? [])[1];
  const have = new Set(readFileSync(target, "utf8").split("\n").map(keyOf).filter(Boolean));
  const missing = example.split("\n").filter((line) => keyOf(line) && !have.has(keyOf(line)));
  if (missing.length === 0) return "kept existing";
  appendFileSync(target, `\n# Added by npm run setup from .dev.vars.example\n${missing.join("\n")}\n`);
  return `kept existing, added ${missing.map(keyOf).join(", ")}`;
});
