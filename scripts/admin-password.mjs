// `npm run admin-password [-- <account>]`: prints one ADMIN_ACCOUNTS entry for the owner's admin,
// `<name>:pbkdf2-sha256:100000:<salt>:<hash>` (PBKDF2-HMAC-SHA-256, 16 random salt bytes, a 32-byte
// hash, both unpadded base64url), the format src/domain/admin/password.rs reads.
//
// The password comes from the environment variable ADMIN_PASSWORD, else it is asked for on the
// terminal without echo (twice), else (stdin not a terminal) one line is read from stdin. Passwords
// shorter than 12 characters are refused. Node built-ins only.
import { pbkdf2Sync, randomBytes } from "node:crypto";
import { createInterface } from "node:readline";

const ITERATIONS = 100_000;
const MIN_PASSWORD_CHARS = 12;
const MAX_PASSWORD_BYTES = 1024;

function fail(message) {
  process.stderr.write(`admin-password: ${message}\n`);
  process.exit(1);
}

/** Reads one line from a terminal without echoing it. */
function askHidden(prompt) {
  return new Promise((resolve, reject) => {
    const input = process.stdin;
    process.stderr.write(prompt);
    input.setRawMode(true);
    input.resume();
    input.setEncoding("utf8");
    let typed = "";
    const done = (value, error) => {
      input.setRawMode(false);
      input.pause();
      input.removeListener("data", onData);
      process.stderr.write("\n");
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") return done(typed);
        if (ch === "\u0003") return done(null, new Error("cancelled"));
        if (ch === "\u0004") return done(typed);
        if (ch === "\u007f" || ch === "\b") typed = typed.slice(0, -1);
        else if (ch >= " ") typed += ch;
      }
    };
    input.on("data", onData);
  });
}

/** Reads the first line of a piped stdin. */
function readLine() {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, terminal: false });
    let answered = false;
    rl.once("line", (line) => {
      answered = true;
      rl.close();
      resolve(line);
    });
    rl.once("close", () => {
      if (!answered) resolve("");
    });
  });
}

async function password() {
  if (process.env.ADMIN_PASSWORD !== undefined && process.env.ADMIN_PASSWORD !== "") return process.env.ADMIN_PASSWORD;
  if (process.stdin.isTTY) {
    const first = await askHidden("Password (at least 12 characters, not shown): ");
    if ([...first].length < MIN_PASSWORD_CHARS) return first; // refused below, no need to repeat it
    const second = await askHidden("Same password again: ");
    if (first !== second) fail("the two passwords differ; nothing printed");
    return first;
  }
  return (await readLine()).replace(/\r$/, "");
}

const b64url = (bytes) => Buffer.from(bytes).toString("base64url"); // unpadded (RFC 4648 §5)

const args = process.argv.slice(2).filter((a) => a !== "--");
if (args.includes("-h") || args.includes("--help")) {
  process.stdout.write(
    "usage: npm run admin-password [-- <account>]   (account default: owner)\n" +
      "password: from ADMIN_PASSWORD, else asked on the terminal, else one line of stdin\n",
  );
  process.exit(0);
}
if (args.length > 1) fail("give at most one account name");
const name = (args[0] ?? "owner").trim().toLowerCase();
if (!/^[a-z0-9._@-]{1,64}$/.test(name)) fail(`the account name ${JSON.stringify(name)} must be 1–64 of a-z 0-9 . _ @ -`);

let secret;
try {
  secret = await password();
} catch (e) {
  fail(e.message);
}
if ([...secret].length < MIN_PASSWORD_CHARS) fail(`the password must be at least ${MIN_PASSWORD_CHARS} characters; nothing printed`);
if (Buffer.byteLength(secret, "utf8") > MAX_PASSWORD_BYTES) fail(`the password must be at most ${MAX_PASSWORD_BYTES} bytes; nothing printed`);

const salt = randomBytes(16);
const hash = pbkdf2Sync(secret, salt, ITERATIONS, 32, "sha256");
const entry = `${name}:pbkdf2-sha256:${ITERATIONS}:${b64url(salt)}:${b64url(hash)}`;

process.stdout.write(`${entry}\n`);
process.stderr.write(`
Account ${name}: the line above is its ADMIN_ACCOUNTS entry (a hash; the password itself is not in it).
Production: store it as a secret of the Worker:

  npx wrangler secret put ADMIN_ACCOUNTS

and paste the entry when asked. Several accounts: their entries separated by commas, in one value
(putting the secret again replaces the whole list). Locally: ADMIN_ACCOUNTS=<entry> in .dev.vars.
Sign in at <PUBLIC_BASE_URL>/admin.
`);
