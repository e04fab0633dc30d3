// The upload size budget, checked on the built Worker: `wrangler deploy --dry-run` bundles exactly
// what a deploy would upload (offline, nothing is sent) and prints "Total Upload: X KiB / gzip:
// Y KiB"; the gzip figure is what Cloudflare's Worker size limit counts
// (https://developers.cloudflare.com/workers/platform/limits/#worker-size: 3 MiB compressed on the
// free plan, 10 MiB on paid). This engine keeps itself to 1.2 MiB so it fits the free plan with room
// to spare; a change that grows it past the budget fails `npm test` (run with `node
// scripts/size-check.mjs` after `npm run build`, or from scripts/test.mjs).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { root, nodeBin, toolEnv } from "./lib.mjs";

/** The budget for wrangler's gzip "Total Upload", in KiB (1.2 MiB). */
export const UPLOAD_GZIP_BUDGET_KIB = 1.2 * 1024;

/**
 * Bundles the Worker as a deploy would and reads wrangler's sizes.
 * @returns {{ totalKiB: number, gzipKiB: number, budgetKiB: number, within: boolean }}
 * @throws when wrangler fails or prints no "Total Upload" line.
 */
export function measureUpload() {
  const outdir = mkdtempSync(join(tmpdir(), "engine-dry-run-"));
  try {
    const r = spawnSync(join(nodeBin, "wrangler"), ["deploy", "--dry-run", "--outdir", outdir], {
      cwd: root,
      env: { ...toolEnv(), WRANGLER_SEND_METRICS: "false" },
      encoding: "utf8",
      timeout: 180_000,
    });
    const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
    const m = /Total Upload:\s*([\d.]+)\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(out);
    if (!m) throw new Error(`wrangler deploy --dry-run printed no "Total Upload" line (exit ${r.status}):\n${out.slice(-2000)}`);
    const totalKiB = Number(m[1]);
    const gzipKiB = Number(m[2]);
    return { totalKiB, gzipKiB, budgetKiB: UPLOAD_GZIP_BUDGET_KIB, within: gzipKiB <= UPLOAD_GZIP_BUDGET_KIB };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const s = measureUpload();
  const line = `upload ${s.totalKiB.toFixed(2)} KiB, gzip ${s.gzipKiB.toFixed(2)} KiB of a ${s.budgetKiB.toFixed(1)} KiB budget`;
  if (!s.within) {
    console.error(`✗ over budget: ${line}`);
    process.exit(1);
  }
  console.log(`✓ ${line} (${(s.budgetKiB - s.gzipKiB).toFixed(2)} KiB to spare)`);
}
