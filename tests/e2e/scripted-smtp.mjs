// A scripted SMTP server on node:net, for the failover tests that need replies a real server
// library will not produce (smtp-server cannot answer a bare `250`, or a blank line before it).
// It speaks plain SMTP (no TLS, no AUTH), one command at a time, and counts per recipient every
// DATA transaction (a message ended by its final dot) and every one it accepted.
//
// What it answers is chosen by the recipient's `+tag@` (the local part after `+`):
// - `bare-250` → `250\r\n` after the final dot; `lf-250` → `250\n`; `blank-250` → `\r\n250 OK\r\n`;
//   `multiline-250` → `250-2.0.0 Ok\r\n250 2.0.0 queued as …\r\n`;
// - `slow-250` → `250 2.0.0 Ok` after SLOW_REPLY_MS (longer than the engine's per-command limit
//   in the test configuration, shorter than its final-reply limit);
// - `lost-once` → the first transaction to that recipient ends with a hang-up right after the
//   dot (no reply), later ones get `250`; `lost-always` → every one ends that way;
// - `dmarc-once` → the first transaction is refused at the dot (`550 5.7.26 …` DMARC), later ones
//   get `250`;
// - `unknown-user` → RCPT TO refused with `550 5.1.1 … User unknown`;
// - `content-refused` → every transaction is refused at the dot with a content verdict
//   (`550 5.7.1 Message content rejected by policy`, as a relay's spam or content filter answers);
// - anything else → `250 2.0.0 Ok: queued as <n>`.
// The reply to MAIL FROM is `250` unless a test sets one (the "our sender is refused" case).
//
// Control (HTTP, loopback): `GET /_test/log` →
//   `{transactions: {<recipient>: n}, accepted: {<recipient>: n}, subjects: {<recipient>: [..]}}`;
// `POST /_test/mail-from` with `{"reply": "553 5.7.1 …"}` (or `{"reply": null}` for `250`).
// Every message whose final dot arrived is handed to `onMessage(recipient, text)` (the calendar
// check of tests/e2e/global-setup.mjs).
import { createServer } from "node:net";
import { createServer as createHttpServer } from "node:http";

/** How long a `slow-250` reply waits, ms. */
export const SLOW_REPLY_MS = 3_000;

export async function startScriptedSmtp({ onMessage = () => {} } = {}) {
  const transactions = new Map();
  const accepted = new Map();
  const subjects = new Map();
  let mailFromReply = null;
  let queued = 0;
  const bump = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);

  const smtp = createServer((socket) => {
    socket.setNoDelay(true);
    let buffer = Buffer.alloc(0);
    let inData = false;
    let data = [];
    let rcpt = null;
    let closed = false;
    socket.on("close", () => (closed = true));
    socket.on("error", () => {});
    const send = (bytes) => {
      if (!closed) socket.write(bytes);
    };
    const line = (text) => send(`${text}\r\n`);
    const tag = () => /\+([a-z0-9-]+)@/.exec(rcpt ?? "")?.[1] ?? "";

    const finishData = () => {
      const message = Buffer.concat(data).toString("utf8");
      onMessage(rcpt, message);
      const subject = /^Subject: (.*)$/im.exec(message)?.[1]?.trim() ?? "";
      const n = bump(transactions, rcpt).get(rcpt);
      if (!subjects.has(rcpt)) subjects.set(rcpt, []);
      subjects.get(rcpt).push(subject);
      const ok = (bytes) => {
        bump(accepted, rcpt);
        send(bytes);
      };
      switch (tag()) {
        case "bare-250":
          return ok("250\r\n");
        case "lf-250":
          return ok("250\n");
        case "blank-250":
          return ok("\r\n250 OK\r\n");
        case "multiline-250":
          return ok(`250-2.0.0 Ok\r\n250 2.0.0 queued as S${++queued}\r\n`);
        case "slow-250":
          return setTimeout(() => ok("250 2.0.0 Ok\r\n"), SLOW_REPLY_MS);
        case "lost-once":
          return n === 1 ? socket.destroy() : ok("250 2.0.0 Ok\r\n");
        case "lost-always":
          return socket.destroy();
        case "content-refused":
          return send("550 5.7.1 Message content rejected by policy\r\n");
        case "dmarc-once":
          if (n === 1) {
            return send(
              "550-5.7.26 Unauthenticated email from example.com is not accepted due to\r\n550 5.7.26 domain's DMARC policy.\r\n",
            );
          }
          return ok("250 2.0.0 Ok\r\n");
        default:
          return ok(`250 2.0.0 Ok: queued as S${++queued}\r\n`);
      }
    };

    const command = (text) => {
      const verb = text.split(/[ :]/)[0].toUpperCase();
      switch (verb) {
        case "EHLO":
          line("250-scripted.test");
          line("250-8BITMIME");
          return line("250 SIZE 10000000");
        case "HELO":
          return line("250 scripted.test");
        case "MAIL":
          rcpt = null;
          return line(mailFromReply ?? "250 2.1.0 Ok");
        case "RCPT": {
          rcpt = (/<([^>]*)>/.exec(text)?.[1] ?? "").toLowerCase();
          if (tag() === "unknown-user") return line(`550 5.1.1 <${rcpt}>: Recipient address rejected: User unknown in local recipient table`);
          return line("250 2.1.5 Ok");
        }
        case "DATA":
          if (!rcpt) return line("554 5.5.1 Error: no valid recipients");
          inData = true;
          data = [];
          return line("354 End data with <CR><LF>.<CR><LF>");
        case "RSET":
        case "NOOP":
          return line("250 2.0.0 Ok");
        case "QUIT":
          line("221 2.0.0 Bye");
          return socket.end();
        default:
          return line("502 5.5.2 Error: command not recognized");
      }
    };

    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const at = buffer.indexOf("\n");
        if (at < 0) return;
        const raw = buffer.subarray(0, at + 1);
        buffer = buffer.subarray(at + 1);
        if (inData) {
          if (raw.toString() === ".\r\n") {
            inData = false;
            finishData();
          } else {
            data.push(raw);
          }
          continue;
        }
        command(raw.toString().replace(/\r?\n$/, ""));
      }
    });
    line("220 scripted.test ESMTP");
  });

  const control = createHttpServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const json = (status, body) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.method === "GET" && req.url === "/_test/log") {
        return json(200, {
          transactions: Object.fromEntries(transactions),
          accepted: Object.fromEntries(accepted),
          subjects: Object.fromEntries(subjects),
        });
      }
      if (req.method === "POST" && req.url === "/_test/mail-from") {
        mailFromReply = JSON.parse(raw || "{}").reply ?? null;
        return json(200, { reply: mailFromReply });
      }
      json(404, { error: "no such route" });
    });
  });

  const listen = (server) => new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
  const smtpPort = await listen(smtp);
  const controlPort = await listen(control);
  return {
    smtpPort,
    controlPort,
    close() {
      smtp.close();
      control.close();
    },
  };
}
