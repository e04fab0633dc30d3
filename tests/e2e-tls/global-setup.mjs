// The TLS run's own set-up, next to tests/e2e/global-setup.mjs: an SMTP server (npm `smtp-server`)
// that offers STARTTLS with a certificate no client trusts (the package's own self-signed
// `localhost` certificate), on a free port (tlsSmtpPort); its control API on tlsSmtpControlPort:
// `GET /_test/report` → how many connections asked for STARTTLS and how many messages arrived.
import { createServer as createHttpServer } from "node:http";
import { freePort } from "../../scripts/lib.mjs";

export default async function setup(project) {
  const { SMTPServer } = await import("smtp-server");
  const report = { connections: 0, delivered: 0 };
  const smtp = new SMTPServer({
    secure: false,
    authOptional: true,
    logger: false,
    onConnect(_session, callback) {
      report.connections += 1;
      callback();
    },
    onData(stream, _session, callback) {
      stream.on("data", () => {});
      stream.on("end", () => {
        report.delivered += 1;
        callback();
      });
    },
  });
  // The client gives up on the handshake: not an error of the server's.
  smtp.on("error", () => {});
  const port = await freePort();
  await new Promise((resolve) => smtp.listen(port, "127.0.0.1", resolve));
  const control = createHttpServer((req, res) => {
    res.writeHead(req.url === "/_test/report" ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(req.url === "/_test/report" ? report : { error: "no such route" }));
  });
  await new Promise((resolve) => control.listen(0, "127.0.0.1", resolve));
  project.provide("tlsSmtpPort", port);
  project.provide("tlsSmtpControlPort", control.address().port);
  return async () => {
    control.close();
    smtp.close();
  };
}
