// `npm run sample`: posts a liteAPI booking.book (from tests/fixtures) with a fresh event id and
// booking id to the local engine, and prints the answer.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "./lib.mjs";

const port = Number(process.env.ENGINE_PORT ?? 8787);
const token = process.env.LITEAPI_WEBHOOK_TOKEN ?? "dev-liteapi-token";
const envelope = JSON.parse(readFileSync(join(root, "tests", "fixtures", "liteapi-booking-confirmed.json"), "utf8"));
delete envelope._modeled_on;
const stamp = Date.now().toString(36);
envelope.event_id = `evt_sample_${stamp}`;
const response = JSON.parse(envelope.response);
response.data.bookingId = `BK_sample_${stamp}`;
// A stay three weeks ahead, three nights: a stay already over would get no guest email.
const day = (n) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
Object.assign(response.data, { checkin: day(21), checkout: day(24) });
envelope.response = JSON.stringify(response);

const url = `http://127.0.0.1:${port}/webhooks/liteapi`;
try {
  const r = await fetch(url, {
    method: "POST",
    headers: { authorization: token, "content-type": "application/json" },
    body: JSON.stringify(envelope),
  });
  console.log(`POST ${url} → ${r.status} ${await r.text()}`);
  console.log(`booking ${response.data.bookingId}: watch the npm start terminal for the two send_email lines.`);
  process.exit(r.ok ? 0 : 1);
} catch (e) {
  console.error(
    `could not reach the engine at ${url}: ${e.message}. Is \`npm start\` running` +
      (process.env.ENGINE_PORT ? "?" : ` on port ${port}? Started on another port, run \`ENGINE_PORT=<port> npm run sample\`.`),
  );
  process.exit(1);
}
