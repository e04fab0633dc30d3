// The SMTP failover asks for STARTTLS (SMTP_TLS=starttls) of a server whose certificate the
// runtime does not trust (smtp-server's own self-signed `localhost` certificate; workerd logs
// its reason and gives JavaScript only `internal error; reference = …`): the refusal is
// our configuration — the route pauses with the runtime's words and the owner is told once — not
// a transient failure that every email meets in turn.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { enqueueEmail, item, outboxState, outboxStub, passClientGap, setOutboxState, unique } from "../e2e/helpers.mjs";

async function report() {
  return (await fetch(`${env.TLS_SMTP_API}/_test/report`)).json();
}

describe("SMTP over STARTTLS to a server whose certificate is not trusted", () => {
  it("pauses the SMTP route as our configuration, the email keeps its place and its attempts", async () => {
    await outboxState();
    await runInDurableObject(outboxStub(), async (_o, st) => {
      st.storage.sql.exec("DELETE FROM route_log");
    });
    // The main provider is out of its daily quota: SMTP carries the mail.
    await setOutboxState("main_paused_until_ms", Date.now() + 86_400_000);
    await setOutboxState("smtp_paused_until_ms", null);
    const before = await report();
    const to = `${unique("tls")}@example.com`.toLowerCase();
    const key = await enqueueEmail(to);

    const state = await passClientGap();
    const it = item(state, key);
    const paused = state.routeHistory.filter((e) => e.route === "smtp" && e.event === "paused");
    console.log("tls certificate:", JSON.stringify({ status: it?.status, last_error: it?.last_error, paused: paused.map((p) => p.detail) }));
    expect(paused).toHaveLength(1);
    expect(paused[0].detail).toContain("the TLS handshake with the server failed");
    expect(paused[0].detail).toContain("certificate");
    // Paused like refused credentials (PROVIDER_AUTH_PAUSE_MS), not retried at the pace.
    expect(state.smtpPausedUntilMs).toBeGreaterThan(Date.now() + 30 * 60_000);
    expect(it).toMatchObject({ status: "waiting" });
    expect(it.attempts).toBe(it.budget_from);
    expect(it.last_error).toContain("TLS handshake");
    // The owner is told once, naming the fault.
    const alerts = state.items.filter((i) => i.dedupe_key.startsWith("owner_provider_paused:smtp:"));
    expect(alerts.map((a) => a.dedupe_key)).toEqual([expect.stringMatching(/tls-handshake$/)]);
    // The server saw the connection and nothing was delivered.
    const after = await report();
    expect(after.connections).toBeGreaterThan(before.connections);
    expect(after.delivered).toBe(before.delivered);
  });
});
