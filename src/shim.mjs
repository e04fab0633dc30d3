// The Worker's default entrypoint over the Rust exports. scripts/build.mjs copies this file beside
// wasm-bindgen's output (`./index.js` there), appends one `export const <Class> = resilient(...)`
// line per class Rust exports (the Outbox Durable Object), and bundles it into build/index.js,
// which src/entry.mjs imports.
//
// Recovery after a fatal wasm error: a Rust panic (or any trap) leaves the module's memory in an
// unknown state, so the next call would run on it. wasm-bindgen's reset-state function
// (`--experimental-reset-state-function`) starts a fresh instance of the module; the flags object
// is workers-rs's (`__worker_init_state`). After a trap, the next entry into Rust resets the module
// first, and every Durable Object wrapper re-creates its Rust object on the new instance (its
// storage is the platform's, so nothing kept there is lost).
import { WorkerEntrypoint } from "cloudflare:workers";
import * as rust from "./index.js";

Error.stackTraceLimit = 100;

/** `{ criticalError: boolean, instanceId: number }`, shared with the Rust side. */
const health = rust.__worker_init_state();

/** Resets the module when the last call trapped. */
function resetIfPoisoned() {
  if (!health.criticalError) return;
  console.log("Reinitializing Wasm application");
  rust.__wbg_reset_state();
  health.criticalError = false;
  health.instanceId++;
}

/** Marks the module poisoned when `e` is a wasm trap. */
function noteTrap(e) {
  if (e instanceof WebAssembly.RuntimeError) {
    console.error("Critical", e);
    health.criticalError = true;
  }
}

addEventListener("error", (e) => noteTrap(e.error));

/** Calls `f` after a pending reset; a trap it throws (at once or from its promise) is noted. */
function guarded(f) {
  resetIfPoisoned();
  let result;
  try {
    result = f();
  } catch (e) {
    noteTrap(e);
    throw e;
  }
  if (result && typeof result.then === "function") {
    return result.then(undefined, (e) => {
      noteTrap(e);
      throw e;
    });
  }
  return result;
}

// Rust's event handlers take (event, env, ctx); every other export is a plain method.
const HANDLERS = new Set(["fetch", "queue", "scheduled", "email", "connect"]);
const INTERNAL = new Set(["__wbg_reset_state", "__worker_init_state"]);

class Engine extends WorkerEntrypoint {}
for (const [name, value] of Object.entries(rust)) {
  if (typeof value !== "function" || INTERNAL.has(name) || /^[A-Z]/.test(name)) continue;
  Engine.prototype[name] = HANDLERS.has(name)
    ? function (arg) {
        return guarded(() => rust[name].call(this, arg, this.env, this.ctx));
      }
    : function (...args) {
        return guarded(() => rust[name].apply(this, args));
      };
}
export default Engine;

/**
 * A class the runtime constructs (a Durable Object) whose Rust object is re-created after a
 * reset: every method of the Rust class is forwarded to the current Rust object.
 */
function resilient(RustClass) {
  class Wrapper {
    #args;
    #inner;
    #instanceId;
    constructor(...args) {
      this.#args = args;
      guarded(() => this.#make());
    }
    #make() {
      this.#inner = new RustClass(...this.#args);
      this.#instanceId = health.instanceId;
    }
    /** The Rust object on the module instance that runs now. */
    current() {
      if (this.#instanceId !== health.instanceId) this.#make();
      return this.#inner;
    }
  }
  for (const name of Object.getOwnPropertyNames(RustClass.prototype)) {
    const d = Object.getOwnPropertyDescriptor(RustClass.prototype, name);
    if (name === "constructor" || name === "free" || name.startsWith("__") || typeof d.value !== "function") continue;
    Wrapper.prototype[name] = function (...args) {
      return guarded(() => {
        const inner = this.current();
        return inner[name](...args);
      });
    };
  }
  Object.defineProperty(Wrapper, "name", { value: RustClass.name });
  return Wrapper;
}
