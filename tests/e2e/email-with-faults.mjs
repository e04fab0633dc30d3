import { WorkerEntrypoint } from "cloudflare:workers";

// A wrapped `send_email` binding for tests: the real local binding, plus failures on command.
// A recipient like `guest+daily-limit@example.com` makes the call throw the error Cloudflare Email
// Service throws (an Error whose `code` is E_DAILY_LIMIT_EXCEEDED), so the outbox's failover is
// exercised without mocks in the engine's code.
const FAULTS = {
  "daily-limit": "E_DAILY_LIMIT_EXCEEDED",
  "rate-limit": "E_RATE_LIMIT_EXCEEDED",
  suppressed: "E_RECIPIENT_SUPPRESSED",
  internal: "E_INTERNAL_SERVER_ERROR",
};

function faultFor(to) {
  const addresses = Array.isArray(to) ? to : [to];
  for (const address of addresses) {
    const text = typeof address === "string" ? address : address?.email ?? "";
    const match = /\+([a-z-]+)@/.exec(text);
    if (match && FAULTS[match[1]]) return FAULTS[match[1]];
  }
  return null;
}

export class EmailWithFaults extends WorkerEntrypoint {
  async send(message) {
    const code = faultFor(message.to);
    if (code) {
      const error = new Error(`${code}: injected by the test harness`);
      error.code = code;
      throw error;
    }
    const result = await this.env.REAL_EMAIL.send(message);
    return { messageId: result.messageId };
  }
}

export default {
  fetch() {
    return new Response("email-with-faults: RPC only", { status: 404 });
  },
};
