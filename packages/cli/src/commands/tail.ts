import { InvalidArgumentError, type Command } from "commander";
import { followEvents, unwrap, type StreamFrame, type SvcClient } from "@svc/sdk";
import { context } from "../context.js";
import { jsonText, printError, printLine, printPart, visible } from "../output.js";
import { agentPath } from "./agents.js";

export function tailCommand(program: Command): void {
  program
    .command("tail <agent>")
    .description("follow the agent's timeline live: messages, text as it is written, tool calls and interactions; resumes after a dropped connection")
    .option("--after <sequence>", "start after this saved sequence (0 replays the whole timeline)", parseSequence, 0)
    .option("--no-deltas", "do not show text while the model writes it, only complete responses")
    .option("--until-idle", "stop after the first response that ends a turn (for scripts)")
    .action(async (agent: string, options: { after: number; deltas: boolean; untilIdle?: boolean }, command: Command) => {
      const ctx = await context(command);
      const { orgID, projectID, agentID } = await agentPath(ctx, agent);
      const controller = new AbortController();
      process.once("SIGINT", () => controller.abort());
      const render = ctx.json ? (frame: StreamFrame) => printLine(jsonText(frame)) : renderer();
      const stream = followEvents(ctx.client(), {
        orgId: orgID,
        projectId: projectID,
        agentId: agentID,
        afterSequence: options.after,
        streamDeltas: options.deltas,
        signal: controller.signal,
        onReconnect: (r) => printError(`svc: reconnecting after sequence ${r.lastSequence} (${visible(r.reason)})`),
      });
      // Tool call updates are not replayed (spec, Events rule 4): what already waits is asked for once,
      // after the replay has reached the newest saved event, so it follows the call that asked.
      let waiting = ctx.json ? undefined : await newestSequence(ctx.client(), { orgID, projectID, agentID });
      if (waiting !== undefined && waiting <= options.after) {
        waiting = undefined;
        await showInteractions(ctx.client(), orgID, projectID, agentID);
      }
      for await (const frame of stream) {
        render(frame);
        if (waiting !== undefined && frame.sequence !== undefined && frame.sequence >= waiting) {
          waiting = undefined;
          await showInteractions(ctx.client(), orgID, projectID, agentID);
        }
        if (!ctx.json && frame.event === "tool_call_update" && isRecord(frame.data) && WAITS_FOR_PEOPLE.has(String(frame.data["state"]))) {
          await showInteractions(ctx.client(), orgID, projectID, agentID);
        }
        if (options.untilIdle && frame.event === "model_output" && isRecord(frame.data) && frame.data["stop_reason"] !== "tool_use") controller.abort();
      }
    });
}

/** The sequence of the agent's newest saved event (0 before any). */
async function newestSequence(client: SvcClient, path: { orgID: string; projectID: string; agentID: string }): Promise<number> {
  const page = await unwrap(client.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/events", { params: { path, query: { before_sequence: 0, limit: 1 } } }));
  return page.data.at(-1)?.sequence ?? 0;
}

/** Tool call states in which an interaction may wait: a permission request, or a question being asked. */
const WAITS_FOR_PEOPLE = new Set(["awaiting_permission", "waiting"]);

/** An interaction waits for `svc approve` or `svc answer`: say which, with its options. */
async function showInteractions(client: SvcClient, orgID: string, projectID: string, agentID: string): Promise<void> {
  const open = await unwrap(client.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/interactions", { params: { path: { orgID, projectID, agentID }, query: { state: "open", limit: 20 } } }));
  for (const interaction of open.data) {
    printLine(`? ${visible(interaction.request.title)} [${visible(interaction.id)}]`);
    for (const question of interaction.request.questions) {
      printLine(`  ${visible(question.prompt)}`);
      question.options.forEach((option, i) => printLine(`    ${i}) ${visible(option.label)}`));
    }
    printLine(`  svc approve ${visible(agentID)} ${visible(interaction.id)}   or   svc answer ${visible(agentID)} ${visible(interaction.id)} --option N`);
  }
}

/**
 * Text previews are written as they come; the complete response then only ends the line (spec, Events
 * rule 3), and adds what previews do not carry: tool calls, and the error block of a failed model call.
 * Bodies keep their lines; names, ids and states are shown on one.
 */
function renderer(): (frame: StreamFrame) => void {
  const previewed = new Set<string>();
  return (frame) => {
    const data = isRecord(frame.data) ? frame.data : {};
    switch (frame.event) {
      case "agent_input":
        for (const text of texts(data["content_blocks"])) printLine(`> ${text}`);
        if (data["input_kind"] !== "content") printLine(`> (${visible(String(data["input_kind"]))})`);
        break;
      case "model_output_delta": {
        const event = isRecord(data["event"]) ? data["event"] : {};
        if (event["kind"] === "text_delta" && typeof event["delta"] === "string") {
          previewed.add(String(data["model_call_context_id"]));
          printPart(event["delta"]);
        }
        break;
      }
      case "model_output": {
        const blocks = Array.isArray(data["content_blocks"]) ? data["content_blocks"] : [];
        if (previewed.delete(String(data["model_call_context_id"]))) printPart("\n");
        else for (const text of texts(blocks)) printLine(text);
        for (const text of texts(blocks, "error")) printLine(`! model error: ${text}`);
        for (const block of blocks) if (isRecord(block) && block["type"] === "tool_call") printLine(`→ ${visible(String(block["name"]))} ${jsonText(block["input"])} [${visible(String(block["tool_call_id"]))}]`);
        break;
      }
      case "tool_result":
        printLine(`← ${visible(String(data["outcome"]))} [${visible(String(data["tool_call_id"]))}]${texts(data["content_blocks"]).map((t) => ` ${t}`).join("")}`);
        for (const line of structured(data["content_blocks"])) printLine(`  ${line}`);
        break;
      case "tool_call_update":
        printLine(`… ${visible(String(data["state"]))} [${visible(String(data["tool_call_id"]))}]`);
        break;
      case "context_checkpoint":
        printLine("(earlier context summarized)");
        break;
      case "budget_exceeded":
        printLine(`! paused by budget ${visible(String(data["budget_id"]))} until ${data["period_end"] === null ? "it is raised or deleted" : visible(String(data["period_end"]))}`);
        break;
    }
  };
}

/** The text of the blocks of one type: `text` blocks, or the `error` block a failed model call ends with. */
function texts(blocks: unknown, type: "text" | "error" = "text"): string[] {
  if (!Array.isArray(blocks)) return [];
  return blocks.filter((b): b is Record<string, unknown> => isRecord(b) && b["type"] === type && typeof b["text"] === "string").map((b) => String(b["text"]));
}

const MAX_JSON_CHARS = 500;

/**
 * Structured results, readably: a command's output and errors as lines (run_command and the process
 * tools answer `{output, stderr, exit_code, …}`), anything else as JSON cut to a few hundred characters.
 */
function structured(blocks: unknown): string[] {
  if (!Array.isArray(blocks)) return [];
  const lines: string[] = [];
  for (const block of blocks) {
    if (!isRecord(block) || block["type"] !== "structured_data") continue;
    const value = block["value"];
    if (isRecord(value) && (typeof value["output"] === "string" || typeof value["stderr"] === "string")) {
      for (const stream of ["output", "stderr"] as const) {
        const text = value[stream];
        if (typeof text === "string" && text) lines.push(...text.replace(/\n$/, "").split("\n").map((l) => (stream === "stderr" ? `! ${l}` : l)));
      }
      if (typeof value["exit_code"] === "number") lines.push(`(exit ${value["exit_code"]})`);
    } else {
      const json = jsonText(value);
      lines.push(json.length > MAX_JSON_CHARS ? `${json.slice(0, MAX_JSON_CHARS)}…` : json);
    }
  }
  return lines;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseSequence(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError(`not a sequence: ${value}`);
  return n;
}
