// Starts the local webhook receiver for bench/webhooks.bench.mjs (the tests' own receiver).
import { startWebhookReceiver } from "../tests/e2e/webhook-receiver.mjs";

export default async function setup(project) {
  const receiver = await startWebhookReceiver();
  project.provide("webhookReceiverPort", receiver.address().port);
  return () => receiver.close();
}
