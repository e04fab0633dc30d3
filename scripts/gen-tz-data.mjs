// `node scripts/gen-tz-data.mjs`: regenerates the coordinates → IANA time zone data that
// src/domain/timezone/tz_lookup.rs compiles into the Worker (`include_bytes!`). Run it by hand after
// updating the devDependency `@photostructure/tz-lookup`; the output is committed, so neither the
// build nor setup downloads or generates anything.
//
// Input: the npm package `@photostructure/tz-lookup` (code CC0-1.0; zone boundaries from
// timezone-boundary-builder, ODbL-1.0 — see docs/timezone-data.md). Its single file `tz.js` holds
// a quadtree as one string `X` and the zone names as an array `T`; both are copied verbatim:
//
//   src/domain/timezone/tz_lookup/quadtree.dat  the string X (ASCII, two characters per node code)
//   src/domain/timezone/tz_lookup/zones.txt     the names of T, one per line, in order
//   tests/fixtures/tz_lookup_golden.csv the package's own answers at 2,000 fixed points (tests)
//
// Before writing, the script checks that every code points inside the tree or at a zone, and
// that a Rust-style decoder over the extracted data agrees with the package's own function on a
// grid of 100,000 points (so a change of upstream format fails here, not in production).
// Another copy of the package can be used with TZ_LOOKUP_DIR=/path/to/node_modules.
import { createRequire } from "node:module";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(process.env.TZ_LOOKUP_DIR ?? join(root, "node_modules"), "noop.js"));
const pkgJson = require.resolve("@photostructure/tz-lookup/package.json");
const pkg = JSON.parse(readFileSync(pkgJson, "utf8"));
const upstream = require("@photostructure/tz-lookup");
const src = readFileSync(join(dirname(pkgJson), "tz.js"), "utf8");

const m = src.match(/var X="([^"\\]*)",T=(\[[^\]]*\])/);
if (!m) throw new Error(`tz.js of ${pkg.name}@${pkg.version} no longer has the expected X/T layout`);
const X = m[1];
const T = JSON.parse(m[2]);

// The layout the Rust decoder relies on (tz_lookup.rs has the same constants).
const ROOT_COLS = 48; // 7.5° of longitude per root cell
const ROOT_ROWS = 24; // 7.5° of latitude per root cell
const CODE_SPACE = 56 * 56; // a code is 56*c0 + c1 - 1995 in 0..3136
const leafBase = CODE_SPACE - T.length;
const code = (i) => 56 * X.charCodeAt(2 * i) + X.charCodeAt(2 * i + 1) - 1995;
const codes = X.length / 2;
const nodes = (codes - ROOT_COLS * ROOT_ROWS) / 4;
if (!Number.isInteger(nodes)) throw new Error("quadtree length is not root grid + 4 codes per node");
for (let i = 0; i < X.length; i++) {
  const c = X.charCodeAt(i);
  if (c < 35 || c > 35 + 55) throw new Error(`character ${c} at ${i} outside the code alphabet`);
}

// Decoder written the way the Rust one is: node index = previous node index + code + 1.
function decode(lat, lon) {
  if (lat >= 90) return "Etc/GMT";
  let x = (48 * (180 + lon)) / 360.00000000000006;
  let y = (24 * (90 - lat)) / 180.00000000000003;
  let xi = Math.trunc(x);
  let yi = Math.trunc(y);
  let node = -1;
  let k = code(48 * yi + xi);
  for (let depth = 0; k < leafBase; depth++) {
    if (depth > 64) throw new Error("quadtree deeper than 64 levels");
    node = node + k + 1;
    if (node >= nodes) throw new Error(`node ${node} outside the tree (${nodes} nodes)`);
    y = (2 * (y - yi)) % 2;
    yi = Math.trunc(y);
    x = (2 * (x - xi)) % 2;
    xi = Math.trunc(x);
    k = code(ROOT_COLS * ROOT_ROWS + 4 * node + 2 * yi + xi);
  }
  return T[k - leafBase];
}

let checked = 0;
for (let i = 0; i < 250; i++) {
  for (let j = 0; j < 400; j++) {
    // Edges included (±90, ±180); interior points off the 7.5° grid lines.
    const lat = i === 0 ? -90 : i === 249 ? 90 : -90 + (180 * i) / 249 + 0.0137;
    const lon = j === 0 ? -180 : j === 399 ? 180 : -180 + (360 * j) / 399 + 0.0071;
    const want = upstream(lat, lon);
    const got = decode(lat, lon);
    if (want !== got) throw new Error(`decoder disagrees at ${lat},${lon}: ${got} vs ${want}`);
    checked++;
  }
}

// Golden answers of the package itself at fixed pseudo-random points, for the Rust decoder's test
// (tests/host/tz_lookup.rs reads them; a mismatch means the Rust port drifted from tz.js).
let seed = 20270328;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
const golden = [];
for (let i = 0; i < 2000; i++) {
  const lat = +(rand() * 180 - 90).toFixed(4);
  const lon = +(rand() * 360 - 180).toFixed(4);
  golden.push(`${lat},${lon},${upstream(lat, lon)}`);
}
writeFileSync(
  join(root, "tests", "fixtures", "tz_lookup_golden.csv"),
  `# latitude,longitude,zone: answers of ${pkg.name}@${pkg.version} (scripts/gen-tz-data.mjs)\n${golden.join("\n")}\n`,
);

const out = join(root, "src", "domain", "timezone", "tz_lookup");
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "quadtree.dat"), X);
writeFileSync(join(out, "zones.txt"), T.join("\n") + "\n");
const gz = (b) => gzipSync(b, { level: 9 }).length;
console.log(
  `${pkg.name}@${pkg.version}: ${T.length} zones, ${nodes} nodes; ` +
    `quadtree.dat ${X.length} B (gzip ${gz(X)} B), zones.txt ${T.join("\n").length + 1} B ` +
    `(gzip ${gz(T.join("\n") + "\n")} B); decoder agreed on ${checked} grid points`,
);
