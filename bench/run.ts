/**
 * `npm run bench`: runs every benchmark on PGlite, and on PostgreSQL too when DATABASE_URL is set, prints
 * each result beside its baseline and rewrites docs/performance.md from the results of both kinds
 * (kept in bench/results/<kind>.json, so a run on one kind keeps the other's last results).
 *
 *   npm run bench                       # PGlite, plus PostgreSQL when DATABASE_URL is set
 *   npm run bench -- --db=pglite        # one kind only
 *   npm run bench -- --only=sse,reads   # some benchmarks (sse, append, reads, tool-results, usage, budget, orchestration, conversation, load, memory)
 *   npm run bench -- --only=conversation --sizes=10,100   # the conversation benchmark at some sizes only (a quick check)
 *   npm run bench -- --only=orchestration --agents=1      # some orchestration scenarios only (a quick check)
 *   npm run bench -- --only=load --clients=50 --seconds=5 --load-agents=10   # a short load run (defaults 200, 30, 20)
 *   npm run bench -- --only=memory      # svc serve's RSS idle, after the load run and 60 s later, beside issue 34's targets
 *   npm run bench -- --db=postgres --only=scale-out   # svc api / svc worker / svc maintenance behind HAProxy, 6 shapes and a kill run (PostgreSQL only)
 *   npm run bench -- --db=postgres --only=scale-out --shapes=1x1,2x1 --scale-agents=10 --scale-seconds=5 --scale-kill=no   # a quick check
 *   npm run bench -- --report-only      # rebuild docs/performance.md from bench/results only
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeProvider } from "../packages/server/src/runtime/models/fake-provider/index.js";
import { appendThroughput } from "./append.js";
import { conversationLength } from "./conversation.js";
import { LOAD_DEFAULTS, loadTest, type LoadOptions } from "./load.js";
import { machine, printResult, startBenchServer, type BenchResult, type DbKind, type Machine } from "./lib.js";
import { orchestration } from "./orchestration.js";
import { pageReads } from "./reads.js";
import { sseFanout } from "./sse-fanout.js";
import { toolResults } from "./tool-results.js";
import { usageReads } from "./usage.js";
import { budgetOverhead } from "./budget.js";
import { memoryTest } from "./memory.js";
import { renderReport } from "./report.js";
import { scaleOptions, scaleOut } from "./scale-out.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=") as [string, string]));
const only = args.get("only")?.split(",");
const wanted = (id: string) => !only || only.includes(id);
const sizes = args.get("sizes")?.split(",").map(Number);
const agents = args.get("agents")?.split(",").map(Number);
const load: LoadOptions = {
  clients: Number(args.get("clients") ?? LOAD_DEFAULTS.clients),
  seconds: Number(args.get("seconds") ?? LOAD_DEFAULTS.seconds),
  agents: Number(args.get("load-agents") ?? LOAD_DEFAULTS.agents),
};
const kinds: DbKind[] = args.get("db") ? [args.get("db") as DbKind] : process.env["DATABASE_URL"] ? ["pglite", "postgres"] : ["pglite"];

export interface KindResults {
  kind: DbKind;
  at: string;
  machine: Machine;
  results: BenchResult[];
}

async function runKind(kind: DbKind): Promise<KindResults> {
  const provider = await startFakeProvider();
  const results: BenchResult[] = [];
  const keep = (r: BenchResult) => {
    printResult(kind, r);
    results.push(r);
  };
  try {
    if (wanted("sse")) {
      const server = await startBenchServer(kind);
      try {
        keep(await sseFanout(server, provider.baseUrl, 50));
      } finally {
        await server.close();
      }
    }
    if (wanted("append") || wanted("reads")) {
      const server = await startBenchServer(kind);
      try {
        const { result, longTimeline } = await appendThroughput(server, provider.baseUrl, kind === "pglite" ? 600 : 2000, kind === "pglite" ? 320 : 1200);
        if (wanted("append")) keep(result);
        if (wanted("reads")) keep(await pageReads(server, longTimeline, kind === "pglite" ? 300 : 500));
      } finally {
        await server.close();
      }
    }
    if (wanted("tool-results")) {
      const server = await startBenchServer(kind);
      try {
        keep(await toolResults(server, provider.baseUrl, kind === "pglite" ? 300 : 500));
      } finally {
        await server.close();
      }
    }
    if (wanted("usage")) {
      const server = await startBenchServer(kind);
      try {
        keep(await usageReads(server, provider.baseUrl, kind === "pglite" ? 50 : 100));
      } finally {
        await server.close();
      }
    }
    if (wanted("budget")) {
      const server = await startBenchServer(kind);
      try {
        keep(await budgetOverhead(server, provider));
      } finally {
        await server.close();
      }
    }
    if (wanted("orchestration")) {
      const server = await startBenchServer(kind);
      try {
        keep(await orchestration(server, provider, agents));
      } finally {
        await server.close();
      }
    }
    if (wanted("conversation")) {
      const server = await startBenchServer(kind);
      try {
        keep(await conversationLength(server, provider, sizes));
      } finally {
        await server.close();
      }
    }
    // Its own processes (svc serve, fake provider, bare Fastify): the in-process provider is not used.
    if (wanted("load")) keep(await loadTest(kind, load));
    // Also its own processes; only by name (--only=memory), since a load run already reports RSS beside its times.
    if (only?.includes("memory")) keep(await memoryTest(kind, load));
    // Several processes on one database: PostgreSQL only, and only by name (--only=scale-out), for it runs for minutes.
    if (only?.includes("scale-out")) {
      if (kind === "postgres") for (const result of await scaleOut(scaleOptions(args))) keep(result);
      else console.log("scale-out: skipped on the embedded database: it runs on PostgreSQL only (set DATABASE_URL, --db=postgres)");
    }
  } finally {
    await provider.close();
  }
  return { kind, at: new Date().toISOString(), machine: machine(kind), results };
}

const resultsDir = join(root, "bench", "results");
mkdirSync(resultsDir, { recursive: true });
for (const kind of args.has("report-only") ? [] : kinds) {
  console.log(`\n=== ${kind} ===`);
  const fresh = await runKind(kind);
  const file = join(resultsDir, `${kind}.json`);
  // A partial run (--only) replaces only the benchmarks it ran. The file keeps the date and machine of the
  // run that measured the rest; the fresh results carry their own, so no old number is dated by a new run.
  let written = fresh;
  if (only && existsSync(file)) {
    const previous = JSON.parse(readFileSync(file, "utf8")) as KindResults;
    const kept = previous.results.filter((r) => !fresh.results.some((f) => f.id === r.id));
    const stamped = fresh.results.map((r) => ({ ...r, run: { at: fresh.at, machine: fresh.machine } }));
    written = { ...previous, results: [...kept, ...stamped] };
  }
  writeFileSync(file, JSON.stringify(written, null, 2) + "\n");
}
const all: KindResults[] = (["pglite", "postgres"] as DbKind[])
  .map((k) => join(resultsDir, `${k}.json`))
  .filter((f) => existsSync(f))
  .map((f) => JSON.parse(readFileSync(f, "utf8")));
// The page's "Memory" and "Test suite" sections are written from measurements the bench does not repeat (where the
// memory goes, by /proc and V8's figures; the test suite's run): a run keeps them as they are.
const page = join(root, "docs", "performance.md");
const written = existsSync(page) ? readFileSync(page, "utf8") : "";
const handWritten = ["Memory", "Test suite"].map((title) => new RegExp(`^## ${title}\\n[\\s\\S]*?(?=^## |(?![\\s\\S]))`, "m").exec(written)?.[0]);
writeFileSync(page, renderReport(all) + handWritten.map((section) => (section ? `\n${section.trimEnd()}\n` : "")).join(""));
console.log("\nwrote docs/performance.md");
process.exit(0);
