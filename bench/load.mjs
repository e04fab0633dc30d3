// HTTP load for bench/run.mjs: autocannon with a bounded request count and a body generated per
// request. Every response's latency is kept (autocannon's own histogram rounds to whole ms, too
// coarse for the floor Worker), so percentiles are exact and runs can be merged.
import autocannon from "autocannon";

/**
 * POSTs `amount` requests to `url` over `connections` keep-alive connections, each with the body
 * `makeBody()` returns. Resolves as soon as the last answer arrived (autocannon itself only notices
 * on its next 1 s tick) to `{ latencies, statuses, errors, seconds }`: latencies in ms, sorted;
 * `statuses` counts answers by HTTP status; `errors` are socket errors and timeouts; `seconds` from
 * the start to the last answer.
 */
export function load({ url, connections, amount, headers, makeBody, timeoutS = 30 }) {
  return new Promise((resolve, reject) => {
    const latencies = [];
    const statuses = {};
    let errors = 0;
    let settled = false;
    const started = process.hrtime.bigint();
    let last = started;
    const finish = () => {
      if (settled) return;
      settled = true;
      latencies.sort((a, b) => a - b);
      resolve({ latencies, statuses, errors, seconds: Number(last - started) / 1e9 });
    };
    let instance;
    try {
      instance = autocannon({
        url,
        connections,
        amount,
        pipelining: 1,
        timeout: timeoutS,
        requests: [{ method: "POST", headers, setupRequest: (req) => ({ ...req, body: makeBody() }) }],
      });
    } catch (e) {
      reject(e);
      return;
    }
    const check = () => {
      if (latencies.length + errors >= amount) finish();
    };
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      last = process.hrtime.bigint();
      latencies.push(responseTime);
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      check();
    });
    instance.on("reqError", () => {
      last = process.hrtime.bigint();
      errors += 1;
      check();
    });
    instance.then(finish, (e) => (settled ? undefined : reject(e)));
  });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Merges runs of `load` into `{ requests, seconds, rps, p50, p99, max, statuses, errors }`. */
export function summarize(runs) {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const seconds = runs.reduce((s, r) => s + r.seconds, 0);
  const statuses = {};
  for (const r of runs) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  return {
    requests: latencies.length,
    seconds,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? NaN,
    statuses,
    errors: runs.reduce((s, r) => s + r.errors, 0),
  };
}
