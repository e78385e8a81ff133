import type { TransferSpec } from "../../db/schema/daemon.js";
import type { Tx } from "../../platform/db/index.js";
import { newUuid } from "../../platform/ids.js";
import type { AgentRow } from "../store/journal.js";
import { insertProcess, notifyDaemonWork } from "../store/processes.js";
import { completeToolCall, setToolCallState, textBlock, type ToolCallRow } from "../store/tool-calls.js";
import { ARTIFACTS_DIR, MEMORY_DIR, notFound, resolveFilePath } from "./files/paths.js";
import { attachedStores } from "./files/memory.js";
import type { AgentDefinition, MemoryAttachmentDefinition } from "../definition.js";
import { TRANSFER_LIMITS } from "./catalog-transfer.js";
import type { ToolPorts } from "./machine-tools.js";

/*
 * upload_file and download_file, transactional phase (reference docs/tools/built-in.mdx, "Files"). What svc
 * can judge alone is answered here: the svc-side path (/artifacts, or a file of an attached memory store), the
 * artifact of a download (the agent's own), the machine (attached, granted, online). Then a transfer process
 * is queued for the machine's daemon and the call waits, as run_command's does. svcd reads or writes the
 * machine file and talks to the daemon transfer routes (modules/daemon/transfer-routes.ts); its report
 * completes the call (modules/daemon/transfer-results.ts). Machine paths are checked on the machine.
 */

export interface TransferInput {
  path: string;
  source?: string;
  destination?: string;
  machine_id?: string;
  expected_digest?: string;
}

/**
 * An upload's initial wait outlasts its execution timeout, so its call returns the terminal result (the
 * reference returns early only for downloads). A download returns early after run_command's default wait.
 */
const UPLOAD_WAIT_MS = (TRANSFER_LIMITS.uploadTimeoutSeconds + 10) * 1000;
const DOWNLOAD_WAIT_MS = 10_000;

export async function dispatchTransferTool(tx: Tx, agent: AgentRow, call: ToolCallRow, ports: ToolPorts, definition: AgentDefinition): Promise<void> {
  const { machines } = ports;
  const input = call.input as unknown as TransferInput;
  const fail = (message: string) => completeToolCall(tx, agent, call, "failed", [textBlock(message)]);
  const attached = attachedStores(definition);
  const planned = call.name === "upload_file" ? planUpload(input, attached) : await planDownload(tx, agent, input, ports, attached);
  if (typeof planned === "string") return void (await fail(planned));

  if (!machines) return void (await fail(`The built-in tool ${call.name} cannot run in this deployment (no machines module).`));
  // As run_command: the machines module picks and checks the machine (an offline connected machine fails at once).
  const answer = await machines.commandTarget(tx, agent, input.machine_id !== undefined ? { machine_id: input.machine_id } : {});
  if (!answer.ok) return void (await fail(answer.message));
  const { target } = answer;

  await insertProcess(tx, {
    id: newUuid(),
    orgId: target.orgId,
    agentId: agent.id,
    toolCallId: call.id,
    machineId: target.machineId,
    bindingId: target.bindingId,
    kind: planned.kind,
    transfer: planned.transfer,
    ioMode: "pipe",
    command: planned.label,
    shellSelector: "sh",
    cwd: target.cwd,
    env: target.env,
    secretEnv: {},
    waitMs: planned.kind === "upload" ? UPLOAD_WAIT_MS : DOWNLOAD_WAIT_MS,
  });
  await setToolCallState(tx, call, "waiting");
  await notifyDaemonWork(tx, target.machineId);
}

/** The rows an approver sees for an `always_ask` transfer: the machine, and the file read or written there. */
export async function transferContext(tx: Tx, agent: AgentRow, name: string, input: TransferInput, machines: ToolPorts["machines"]): Promise<Array<{ label: string; value: string }>> {
  const answer = machines ? await machines.commandTarget(tx, agent, input.machine_id !== undefined ? { machine_id: input.machine_id } : {}) : undefined;
  const target = answer?.target;
  const file = name === "upload_file" ? { label: "Machine file read", value: input.source ?? "" } : { label: "Machine file written", value: input.destination ?? "" };
  return [
    { label: "Machine", value: target?.label ?? input.machine_id ?? "none attached" },
    file,
    { label: "Working directory", value: target?.cwd || "the daemon's home" },
  ];
}

interface Plan {
  kind: "upload" | "download";
  transfer: TransferSpec;
  /** What list_processes shows as the process's command. */
  label: string;
}

function planUpload(input: TransferInput, attached: readonly MemoryAttachmentDefinition[]): Plan | string {
  const segments = input.path.replace(/\/+$/, "").split("/");
  if (segments[1] === MEMORY_DIR) return planMemoryUpload(input, attached);
  if (input.path.replace(/\/+$/, "") !== `/${ARTIFACTS_DIR}`) {
    return `upload_file stores files in /artifacts (svc names the artifact; its id is in the result): pass path "/artifacts", not ${JSON.stringify(input.path)}.`;
  }
  if (input.expected_digest !== undefined) {
    return "expected_digest is for replacing memory files; it is not supported for artifacts, which are never replaced (each upload makes a new one). Leave it out.";
  }
  return { kind: "upload", transfer: { source: input.source! }, label: `upload_file ${input.source} -> /artifacts` };
}

/**
 * An upload into an attached memory store (issue 31): the daemon posts the file as for an artifact, and
 * the daemon route writes it as the file's next version, once per call (modules/daemon/transfer-service.ts).
 */
function planMemoryUpload(input: TransferInput, attached: readonly MemoryAttachmentDefinition[]): Plan | string {
  const file = resolveFilePath("upload_file", input.path, attached);
  if ("error" in file) return file.error;
  if (file.kind !== "memory") return `upload_file takes /artifacts or /memory/<store>/<file>; got ${JSON.stringify(input.path)}.`;
  if (file.store.access === "read_only") return `The memory store ${file.store.name} is attached to you read_only: upload_file cannot write ${input.path}.`;
  const memory = { store_id: file.store.storeId, store_name: file.store.name, path: file.file, ...(input.expected_digest !== undefined ? { expected_digest: input.expected_digest } : {}) };
  return { kind: "upload", transfer: { source: input.source!, memory }, label: `upload_file ${input.source} -> ${input.path}` };
}

async function planDownload(tx: Tx, agent: AgentRow, input: TransferInput, ports: ToolPorts, attached: readonly MemoryAttachmentDefinition[]): Promise<Plan | string> {
  const file = resolveFilePath("download_file", input.path, attached);
  if ("error" in file) return file.error;
  if (file.kind === "memory") {
    // The version current now is the one sent, whatever is written meanwhile.
    const found = ports.memory ? await ports.memory.readFile(file.store.storeId, file.file, tx) : undefined;
    if (!found) return notFound(input.path);
    const memory = { store_id: file.store.storeId, store_name: file.store.name, path: file.file, memory_id: found.memoryId, version: found.version, digest: found.digest, size_bytes: found.sizeBytes };
    return { kind: "download", transfer: { destination: input.destination!, memory }, label: `download_file ${input.path} -> ${input.destination}` };
  }
  // Another agent's artifact reads exactly like one that does not exist.
  if (!(await ports.artifacts?.findAgentArtifact(agent.id, file.artifactId, tx))) return notFound(input.path);
  return {
    kind: "download",
    transfer: { artifact_id: file.artifactId, destination: input.destination! },
    label: `download_file ${input.path} -> ${input.destination}`,
  };
}
