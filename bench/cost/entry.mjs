// The Worker as the cost benchmark runs it: the real build (build/index.js) with every binding it
// pays for wrapped in a counter the engine cannot tell from the binding itself. The D1 binding
// (and any session of it, withSession) counts each call (prepare(...).run/all/first/raw, batch,
// exec: one round trip each) and the rows D1 reports it read and wrote (`meta.rows_read` /
// `meta.rows_written`, https://developers.cloudflare.com/d1/worker-api/return-object/; exec()
// reports none); the outbox namespace, the Workflow binding, the email service binding, the
// outbound webhooks' queues (send, sendBatch) and global fetch count subrequests; the Workflow's
// `step` counts the steps run. Counts are kept per tag — the entry point, or the Workflow step's
// name without its ids ("record booking", "send arrival_guide") — and read (and reset) through
// GET /__bench/counts; every SQL text prepared through GET /__bench/sql; every round trip in order
// (its tag and statements) through GET /__bench/trace. One scenario at a time: a Workflow step's tag is module state. Methods are
// called with Reflect.apply: on a Workflow step or an RPC stub, `.call`/`.bind` would be taken as
// remote method names.
import { WorkflowEntrypoint } from "cloudflare:workers";
import Engine, { Outbox as EngineOutbox } from "../../build/index.js";

/** tag → { d1_calls, rows_read, rows_written, subrequests, steps, emails_sent, d1_calls_rows_unreported } */
let counts = new Map();
let currentStep = null;
/** Every SQL text the engine prepared (for the query-plan test: tests/e2e-plans). */
const sqlSeen = new Set();

function bump(tag, field, n = 1) {
  let c = counts.get(tag);
  if (!c) counts.set(tag, (c = { d1_calls: 0, rows_read: 0, rows_written: 0, subrequests: 0, steps: 0, emails_sent: 0, d1_calls_rows_unreported: 0 }));
  c[field] += n;
}

/**
 * Every D1 round trip, in order: `[tag, the first words of each statement, the rows D1 reported
 * each read]` (GET /__bench/trace). `traced` returns the entry, whose rows the caller fills in.
 */
let trace = [];
function traced(tag, sqls) {
  const entry = [tag, sqls.map((q) => String(q).replace(/\s+/g, " ").slice(0, 90)), []];
  trace.push(entry);
  return entry;
}
const rowsOf = (entry, ...results) => entry[2].push(...results.map((r) => Number(r?.meta?.rows_read ?? 0)));
const sqlOf = new WeakMap();

function noteMeta(tag, meta) {
  bump(tag, "rows_read", Number(meta?.rows_read ?? 0));
  bump(tag, "rows_written", Number(meta?.rows_written ?? 0));
}

/** A step name without its ids: the words that hold no digit ("send arrival_guide BK_1 v1" → "send arrival_guide"). */
export function stepTag(name) {
  return `step: ${String(name).split(" ").filter((w) => w && !/[0-9]/.test(w)).slice(0, 3).join(" ")}`;
}

const realStatement = new WeakMap();

function countedStatement(stmt, tagOf) {
  /** Runs one round trip of this statement (`call` returns D1's result) and counts it. */
  const roundTrip = async (call) => {
    const tag = tagOf();
    bump(tag, "d1_calls");
    const entry = traced(tag, [sqlOf.get(wrapped)]);
    const r = await call();
    noteMeta(tag, r?.meta);
    rowsOf(entry, r);
    return r;
  };
  const wrapped = new Proxy(stmt, {
    get(target, prop) {
      if (prop === "bind") {
        return (...values) => {
          const bound = countedStatement(target.bind(...values), tagOf);
          sqlOf.set(bound, sqlOf.get(wrapped));
          return bound;
        };
      }
      if (prop === "run" || prop === "all") {
        return (...args) => roundTrip(() => target[prop](...args));
      }
      if (prop === "first") {
        // One query, as first() runs it (D1 does not add a LIMIT); all() also returns its meta.
        return async (column) => {
          const r = await roundTrip(() => target.all());
          const row = r.results?.[0] ?? null;
          if (row === null || column === undefined || column === null) return row;
          if (!(column in row)) throw new Error(`D1_COLUMN_NOTFOUND: Column not found (${column})`);
          return row[column];
        };
      }
      if (prop === "raw") {
        // D1's raw() returns no meta: served from all() like first(), its rows turned into arrays
        // in column order (the engine's SQL names no column twice nor like an integer, which an
        // object would merge or reorder; such a column fails the benchmark rather than mislead).
        return async ({ columnNames = false } = {}) => {
          const r = await roundTrip(() => target.all());
          const results = r.results ?? [];
          const names = results.length ? Object.keys(results[0]) : [];
          if (names.some((n) => /^\d+$/.test(n))) throw new Error(`bench wrapper: raw() of a column named like an integer (${names})`);
          const arrays = results.map((row) => names.map((n) => row[n]));
          return columnNames ? [names, ...arrays] : arrays;
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" && prop !== "constructor" ? (...a) => Reflect.apply(v, target, a) : v;
    },
  });
  realStatement.set(wrapped, stmt);
  return wrapped;
}

function countedD1(db, tagOf) {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare") {
        return (sql) => {
          sqlSeen.add(sql);
          const st = countedStatement(target.prepare(sql), tagOf);
          sqlOf.set(st, sql);
          return st;
        };
      }
      if (prop === "batch") {
        return async (statements) => {
          const tag = tagOf();
          bump(tag, "d1_calls");
          const entry = traced(tag, statements.map((s) => sqlOf.get(s) ?? "?"));
          const results = await target.batch(statements.map((s) => realStatement.get(s) ?? s));
          for (const r of results) noteMeta(tag, r?.meta);
          rowsOf(entry, ...results);
          return results;
        };
      }
      if (prop === "exec") {
        // exec() reports a statement count and a duration, no rows: counted as a call, and apart
        // as a call whose rows D1 does not report (the table says so when any was made).
        return async (sql) => {
          const tag = tagOf();
          bump(tag, "d1_calls");
          bump(tag, "d1_calls_rows_unreported");
          traced(tag, [sql]);
          return target.exec(sql);
        };
      }
      if (prop === "withSession") {
        // A session (read replication) has the database's prepare and batch: counted alike.
        return (...args) => countedD1(Reflect.apply(target.withSession, target, args), tagOf);
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" && prop !== "constructor" ? (...a) => Reflect.apply(v, target, a) : v;
    },
  });
}

/** An object whose methods `names` count one subrequest each under the caller's tag. */
function countedCalls(obj, names, tagOf, wrapResult = (x) => x, field = null) {
  return new Proxy(obj, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function" || prop === "constructor") return v;
      if (!names.includes(prop)) return (...a) => Reflect.apply(v, target, a);
      return (...args) => {
        bump(tagOf(), "subrequests");
        if (field) bump(tagOf(), field);
        return wrapResult(Reflect.apply(v, target, args));
      };
    },
  });
}

function countedNamespace(ns, tagOf) {
  const stub = (s) => countedCalls(s, ["fetch"], tagOf);
  return new Proxy(ns, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function" || prop === "constructor") return v;
      if (prop === "get" || prop === "getByName") return (...args) => stub(Reflect.apply(v, target, args));
      return (...a) => Reflect.apply(v, target, a);
    },
  });
}

/** `env` with its D1, outbox, Workflow, email and webhook queue bindings counted under `tagOf()`. */
export function countedEnv(env, tagOf) {
  const cache = new Map();
  return new Proxy(env, {
    get(target, prop) {
      if (cache.has(prop)) return cache.get(prop);
      const v = Reflect.get(target, prop, target);
      let w = v;
      if (prop === "DB") w = countedD1(v, tagOf);
      else if (prop === "OUTBOX") w = countedNamespace(v, tagOf);
      else if (prop === "JOURNEY") w = countedCalls(v, ["create", "createBatch", "get"], tagOf);
      else if (prop === "EMAIL") w = countedCalls(v, ["send"], tagOf, (x) => x, "emails_sent");
      // Outbound webhooks' queues: each send or sendBatch is one subrequest.
      else if (prop === "WEBHOOKS" || prop === "WEBHOOKS_DLQ") w = countedCalls(v, ["send", "sendBatch"], tagOf);
      else return v;
      cache.set(prop, w);
      return w;
    },
  });
}

// Outbound HTTP (supplier APIs, Stripe, Resend, outbound webhooks): one subrequest each.
let fetchTag = () => "worker";
const realFetch = globalThis.fetch;
globalThis.fetch = (...args) => {
  bump(currentStep ?? fetchTag(), "subrequests");
  return realFetch(...args);
};

/**
 * Sleeps the journeys have started (GET /__bench/sleeps): the benchmark waits for a journey's first
 * sleep to know its booking's own work is done (the local Workflow engine reports a sleeping
 * instance as running).
 */
let sleepsStarted = 0;

function countedStep(step) {
  return new Proxy(step, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function" || prop === "constructor") return v;
      if (prop === "sleep" || prop === "sleepUntil") {
        return (...a) => {
          sleepsStarted += 1;
          return Reflect.apply(v, target, a);
        };
      }
      if (prop === "do") {
        return (name, ...rest) => {
          const tag = stepTag(name);
          const fn = rest.pop();
          const run = async (...a) => {
            bump(tag, "steps");
            const before = currentStep;
            currentStep = tag;
            try {
              return await fn(...a);
            } finally {
              currentStep = before;
            }
          };
          return Reflect.apply(v, target, [name, ...rest, run]);
        };
      }
      return (...a) => Reflect.apply(v, target, a);
    },
  });
}

/** The Worker: the engine's entrypoint over a counted env, plus the counts endpoint. */
export default class CountedEngine extends Engine {
  constructor(ctx, env) {
    super(ctx, countedEnv(env, () => currentStep ?? "worker"));
  }
  fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/__bench/sql") {
      return new Response(JSON.stringify([...sqlSeen]), { headers: { "content-type": "application/json" } });
    }
    if (url.pathname === "/__bench/sleeps") {
      return new Response(JSON.stringify({ sleeps: sleepsStarted }), { headers: { "content-type": "application/json" } });
    }
    if (url.pathname === "/__bench/trace") {
      const body = JSON.stringify(trace);
      if (url.searchParams.get("reset") === "1") trace = [];
      return new Response(body, { headers: { "content-type": "application/json" } });
    }
    if (url.pathname === "/__bench/counts") {
      const body = JSON.stringify(Object.fromEntries(counts));
      if (url.searchParams.get("reset") === "1") counts = new Map();
      return new Response(body, { headers: { "content-type": "application/json" } });
    }
    return super.fetch(request);
  }
}

/** The outbox Durable Object over a counted env (its D1 sync and provider calls). */
export class Outbox extends EngineOutbox {
  constructor(state, env) {
    super(state, countedEnv(env, () => "outbox"));
  }
}

/** The journey Workflow as src/entry.mjs defines it, over a counted env and a counted step. */
export class JourneyWorkflow extends WorkflowEntrypoint {
  async run(event, step) {
    return Engine.prototype.run_journey(event, countedStep(step), countedEnv(this.env, () => currentStep ?? "workflow"));
  }
}
