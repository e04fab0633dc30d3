// A private Postfix relay for the SMTP failover tests: Debian's `postfix` (installed by
// `npm run setup`) started as its own instance on a free loopback port, with a configuration
// directory, queue, data directory, log and maildir of its own under a temporary folder. The
// machine's own Postfix, if any, is not touched.
//
// Its real restrictions (postconf(5), access(5), header_checks(5)), always on:
// - recipients: every `@example.com` address is a mailbox of one maildir (`box/`), except those
//   starting `unknown-` (not in `virtual_mailbox_maps`: `550 5.1.1 … User unknown in virtual
//   mailbox table`) and `defer-` (`check_recipient_access` DEFER: `450 4.7.1 …`);
// - content: `body_checks` REJECT of any message whose body has REFUSED_MARKER (`550 5.7.1 …`);
// - size: `message_size_limit` = SIZE_LIMIT bytes (`552 5.3.4 Error: message file too big`);
// and per case (`configure`): `check_sender_access` refusing our sender (`554 5.7.1 <…>: Sender
// address rejected: …` at RCPT TO), reloaded with `postfix reload`.
//
// What Postfix did is read from its own log and maildir (`report`): one entry per SMTP session
// (smtpd's `connect`/`disconnect` pair of one process): its recipient and Message-ID, how many
// DATA commands it had (`data=N` or `data=ok/N` on the disconnect line) and whether the message
// was queued; and every delivered message's Message-ID and recipient.
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, readdirSync, existsSync, chownSync, chmodSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:net";

/** A body with this text is refused by `body_checks`. */
export const REFUSED_MARKER = "REFUSE-THIS-CONTENT";
/** `message_size_limit`, bytes. */
export const SIZE_LIMIT = 120_000;
/** Where Debian installs the postfix command. */
export const POSTFIX = "/usr/sbin/postfix";

function run(args) {
  const r = spawnSync(POSTFIX, args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`postfix ${args.join(" ")} exited with ${r.status}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** Resolves once something accepts connections on 127.0.0.1:`port`. */
async function listening(port, ms = 15_000) {
  const until = Date.now() + ms;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = connect(port, "127.0.0.1", () => {
        s.destroy();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`Postfix did not listen on 127.0.0.1:${port} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts a private Postfix on 127.0.0.1:`port`. Returns `{ configure, report, clear, stop, dir }`.
 * Needs root (Postfix's master runs as root and drops to its `postfix` user).
 */
export async function startPostfix(port) {
  if (!existsSync(POSTFIX)) throw new Error(`${POSTFIX} is missing: run \`sudo apt-get install -y postfix\` (npm run setup does it as root)`);
  const dir = mkdtempSync(join(tmpdir(), "engine-postfix-"));
  // mkdtemp makes it 0700: Postfix's own user must reach its data directory inside.
  chmodSync(dir, 0o755);
  const conf = join(dir, "conf");
  const paths = { spool: join(dir, "spool"), data: join(dir, "data"), mail: join(dir, "mail"), log: join(dir, "mail.log") };
  for (const d of [conf, paths.spool, paths.data, paths.mail]) mkdirSync(d, { recursive: true });
  // The data directory belongs to Postfix's own user, the maildirs to the virtual delivery user.
  const id = (flag, name) => Number(spawnSync("id", [flag, name], { encoding: "utf8" }).stdout.trim());
  chownSync(paths.data, id("-u", "postfix"), id("-g", "postfix"));
  chownSync(paths.mail, 65534, 65534);

  const base = [
    "compatibility_level = 3.6",
    `queue_directory = ${paths.spool}`,
    `data_directory = ${paths.data}`,
    "inet_interfaces = 127.0.0.1",
    "inet_protocols = ipv4",
    "myhostname = relay.test",
    "mydestination =",
    "mynetworks = 127.0.0.0/8",
    "virtual_mailbox_domains = example.com",
    `virtual_mailbox_base = ${paths.mail}`,
    `virtual_mailbox_maps = regexp:${join(conf, "mailboxes")}`,
    "virtual_uid_maps = static:65534",
    "virtual_gid_maps = static:65534",
    `smtpd_recipient_restrictions = check_recipient_access regexp:${join(conf, "recipient_access")}, permit_mynetworks, reject`,
    `body_checks = regexp:${join(conf, "body_checks")}`,
    `message_size_limit = ${SIZE_LIMIT}`,
    // A log file of its own (a path must start with one of these prefixes, or Postfix refuses to
    // start).
    `maillog_file_prefixes = /var, /dev/stdout, ${dir}`,
    `maillog_file = ${paths.log}`,
  ];
  writeFileSync(join(conf, "mailboxes"), "!/^unknown-/ box/\n");
  writeFileSync(join(conf, "recipient_access"), "/^defer-/ DEFER try again later\n");
  writeFileSync(join(conf, "body_checks"), `/${REFUSED_MARKER}/ REJECT message content rejected by policy\n`);
  writeFileSync(join(conf, "sender_access"), "/^bookings@example\\.com$/ REJECT not owned by user engine\n");
  const master = readFileSync("/usr/share/postfix/master.cf.dist", "utf8").replace(/^smtp\s+inet\s.*$/m, `127.0.0.1:${port} inet n - n - - smtpd`);
  writeFileSync(join(conf, "master.cf"), master);

  let refusingSender = false;
  const writeMain = () =>
    writeFileSync(
      join(conf, "main.cf"),
      [...base, ...(refusingSender ? [`smtpd_sender_restrictions = check_sender_access regexp:${join(conf, "sender_access")}`] : [])].join("\n") + "\n",
    );
  writeMain();
  run(["-c", conf, "start"]);
  await listening(port);

  return {
    dir,
    /** The per-case restriction: `{ refuseSender }`; reloads Postfix when it changes. */
    async configure({ refuseSender = false } = {}) {
      if (refuseSender === refusingSender) return;
      refusingSender = refuseSender;
      writeMain();
      run(["-c", conf, "reload"]);
      // smtpd processes started before the reload finish their session with the old settings;
      // new sessions get the new ones once master re-read main.cf.
      await new Promise((r) => setTimeout(r, 1_500));
      await listening(port);
    },
    /** What Postfix did so far: `{ sessions: [{to, messageId, data, queued, refusal}], delivered: [{messageId, to}] }`. */
    report() {
      return { sessions: sessions(readLog(paths.log)), delivered: delivered(join(paths.mail, "box")) };
    },
    stop() {
      try {
        run(["-c", conf, "stop"]);
      } finally {
        // POSTFIX_KEEP=1 keeps the folder (log, maildir) to look at after a run.
        if (!process.env.POSTFIX_KEEP) rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function readLog(path) {
  try {
    return readFileSync(path, "utf8").split("\n");
  } catch {
    return [];
  }
}

/** One entry per smtpd session (the lines of one smtpd process between connect and disconnect). */
export function sessions(lines) {
  const open = new Map(); // smtpd pid → session
  const byQueueId = new Map();
  const done = [];
  for (const line of lines) {
    const smtpd = /postfix\/smtpd\[(\d+)\]: (.*)$/.exec(line);
    if (smtpd) {
      const [, pid, text] = smtpd;
      if (text.startsWith("connect from ")) {
        open.set(pid, { to: null, messageId: null, data: 0, queued: false, refusal: null, queueId: null });
        continue;
      }
      const s = open.get(pid);
      if (!s) continue;
      let m;
      if ((m = /^([0-9A-F]+): client=/.exec(text))) {
        s.queueId = m[1];
        byQueueId.set(m[1], s);
      } else if ((m = /^NOQUEUE: reject: \w+ from [^:]+: (.*?); from=<[^>]*>(?: to=<([^>]*)>)?/.exec(text))) {
        s.refusal = m[1];
        if (m[2]) s.to = m[2].toLowerCase();
      } else if ((m = /^disconnect from .* data=(?:(\d+)\/)?(\d+)/.exec(text))) {
        s.data = Number(m[2]);
        s.queued = m[1] === undefined ? s.data > 0 : Number(m[1]) > 0;
        open.delete(pid);
        done.push(s);
      } else if (text.startsWith("disconnect from ")) {
        open.delete(pid);
        done.push(s);
      }
      continue;
    }
    const cleanup = /postfix\/cleanup\[\d+\]: ([0-9A-F]+): (.*)$/.exec(line);
    if (cleanup) {
      const s = byQueueId.get(cleanup[1]);
      if (!s) continue;
      let m;
      if ((m = /^message-id=<([^>]*)>/.exec(cleanup[2]))) s.messageId = m[1];
      else if ((m = /^reject: .*? to=<([^>]*)> .*?: (\d\.\d+\.\d+ .*)$/.exec(cleanup[2]))) {
        s.to = m[1].toLowerCase();
        s.refusal = m[2];
      }
      continue;
    }
    const delivery = /postfix\/virtual\[\d+\]: ([0-9A-F]+): to=<([^>]*)>/.exec(line);
    if (delivery) {
      const s = byQueueId.get(delivery[1]);
      if (s) s.to = delivery[2].toLowerCase();
    }
  }
  return done.map(({ queueId: _, ...s }) => s);
}

/** Every message in the maildir: its Message-ID, recipient (Delivered-To) and Subject. */
export function delivered(box) {
  const out = [];
  for (const sub of ["new", "cur"]) {
    let names = [];
    try {
      names = readdirSync(join(box, sub));
    } catch {
      continue;
    }
    for (const name of names) {
      const text = readFileSync(join(box, sub, name), "utf8");
      const head = text.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, " ");
      const header = (h) => new RegExp(`^${h}:\\s*(.*)$`, "im").exec(head)?.[1]?.trim() ?? null;
      out.push({
        messageId: header("Message-ID")?.replace(/^<|>$/g, "") ?? null,
        to: header("Delivered-To")?.toLowerCase() ?? null,
        subject: header("Subject"),
      });
    }
  }
  return out;
}
