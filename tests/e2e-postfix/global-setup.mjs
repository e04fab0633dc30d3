// The Postfix run's own set-up, next to tests/e2e/global-setup.mjs: a private Postfix relay
// (tests/e2e-postfix/postfix.mjs) on a free port (postfixPort), and its control API on
// postfixControlPort: `POST /_test/configure` with `{"refuseSender": bool}`, `GET /_test/report`
// → what Postfix logged and delivered.
import { createServer as createHttpServer } from "node:http";
import { freePort } from "../../scripts/lib.mjs";
import { startPostfix } from "./postfix.mjs";

export default async function setup(project) {
  const port = await freePort();
  const postfix = await startPostfix(port);
  const control = createHttpServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", async () => {
      const json = (status, body) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      try {
        if (req.method === "GET" && req.url === "/_test/report") return json(200, postfix.report());
        if (req.method === "POST" && req.url === "/_test/configure") {
          await postfix.configure(JSON.parse(raw || "{}"));
          return json(200, { ok: true });
        }
        json(404, { error: "no such route" });
      } catch (e) {
        json(500, { error: String(e?.message ?? e) });
      }
    });
  });
  await new Promise((resolve) => control.listen(0, "127.0.0.1", resolve));
  project.provide("postfixPort", port);
  project.provide("postfixControlPort", control.address().port);
  const stop = () => {
    control.close();
    postfix.stop();
  };
  process.once("exit", () => {
    try {
      stop();
    } catch {}
  });
  return async () => stop();
}
