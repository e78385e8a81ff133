// The first load's JavaScript budget (issue 33): the scripts index.html loads at once (its module script
// and the modulepreloads Vite adds), gzip-compressed, must stay within 300 KB. Run after `vite build`;
// prints the figure and fails the build beyond it. Pages and libraries loaded later (React.lazy,
// dynamic import) are not part of the first load.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const BUDGET = 300 * 1024;
const dist = join(dirname(fileURLToPath(import.meta.url)), "..", "dist");
const html = readFileSync(join(dist, "index.html"), "utf8");
const scripts = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="\/?([^"]+\.js)"/g)].map((m) => m[1]);
if (scripts.length === 0) {
  console.error("bundle budget: index.html loads no script; is this a Vite build?");
  process.exit(1);
}
let total = 0;
for (const script of new Set(scripts)) {
  const size = gzipSync(readFileSync(join(dist, script)), { level: 9 }).length;
  total += size;
  console.log(`  ${script}: ${(size / 1024).toFixed(1)} KB gzip`);
}
const verdict = total <= BUDGET ? "within" : "OVER";
console.log(`First-load JavaScript: ${(total / 1024).toFixed(1)} KB gzip, ${verdict} the ${BUDGET / 1024} KB budget.`);
if (total > BUDGET) process.exit(1);
