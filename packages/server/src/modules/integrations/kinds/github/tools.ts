import { AppError } from "../../../../platform/errors.js";
import { ResponseTooLargeError } from "../../../../platform/net/capped-fetch.js";
import type { IntegrationToolExecutor, ToolAnswer, ToolContext } from "../../kind.js";
import type { RestAnswer, RestClient } from "../rest.js";
import { GITHUB_HEADERS, refusalReason } from "./api.js";
import type { AppCredential, InstallationTokens } from "./installation-token.js";
import { commentOf, fileOf, pullRequestOf, reviewCommentOf } from "./tool-values.js";

/**
 * The `github_pr` tools (reference docs: integrations/github, "Select PR tools"): every operation acts on
 * the pull request assigned at launch, `{repository_id, pull_request}`, so the arguments name neither.
 * Repositories are addressed by their numeric id (`/repositories/{id}/…`, which GitHub serves like
 * `/repos/{owner}/{repo}/…`), as an installation access token. GitHub's 404 and 422 answers are tool
 * errors the model can act on; its rate limits are `rate_limited` (integrations/rest.ts).
 */

/** A diff longer than this is cut, with a note: a whole diff would crowd the model's context. */
export const DIFF_MAX_CHARS = 40_000;
/** GitHub's default page size. */
const DEFAULT_LIMIT = 30;

type Method = "GET" | "POST";
type GithubCall = (method: Method, path: string, json?: unknown, accept?: string) => Promise<RestAnswer>;

interface Assigned {
  repositoryId: number;
  number: number;
}

interface ReadArgs {
  section?: "diff" | "files" | "discussion_comments" | "review_comments";
  page?: number;
  limit?: number;
}

interface InlineArgs {
  body: string;
  commit_id: string;
  path: string;
  line: number;
  side: "LEFT" | "RIGHT";
  start_line?: number;
  start_side?: "LEFT" | "RIGHT";
}

export function createGithubTools(deps: { rest: RestClient; tokens: InstallationTokens }): IntegrationToolExecutor {
  return {
    async execute(operation, args, context) {
      const pr = assignedOf(context.conversation);
      if (!pr) return { ok: false, message: "the assigned conversation is not a GitHub pull request" };
      const credential = credentialOf(context);
      if ("refused" in credential) return { ok: false, message: credential.refused };
      const token = await deps.tokens.get(credential);
      if ("refused" in token) return { ok: false, message: token.refused };
      const call = authorizedCall(deps, credential, token.token);
      const base = `/repositories/${pr.repositoryId}`;
      if (operation === "read") return read(call, base, pr, args as ReadArgs);
      if (operation === "discussion_comment") return posted(await call("POST", `${base}/issues/${pr.number}/comments`, { body: args["body"] }), "the discussion comment");
      if (operation === "inline_comment") return inlineComment(call, base, pr, args as unknown as InlineArgs);
      if (operation === "reply") {
        const answer = await call("POST", `${base}/pulls/${pr.number}/comments/${args["comment_id"]}/replies`, { body: args["body"] });
        if (answer.status === 404) return { ok: false, message: `review comment ${args["comment_id"]} is not a review comment of pull request #${pr.number}; read section review_comments for their ids` };
        return posted(answer, "the reply");
      }
      return { ok: false, message: `github_pr has no operation ${operation}` };
    },
  };
}

function assignedOf(conversation: Record<string, unknown>): Assigned | undefined {
  const repositoryId = conversation["repository_id"];
  const number = conversation["pull_request"];
  const positive = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v > 0;
  return positive(repositoryId) && positive(number) ? { repositoryId, number } : undefined;
}

function credentialOf(context: ToolContext): AppCredential | { refused: string } {
  const material = context.credential;
  if (material.kind !== "github_app_credentials") return { refused: "the integration's credential is not a github_app_credentials secret" };
  if (!context.accountRef) return { refused: "the integration names no GitHub App installation; reconnect it" };
  return { appId: material.app_id, privateKeyPem: material.private_key, installationId: context.accountRef };
}

/**
 * Calls GitHub as the installation. A 401 means the cached token is no longer accepted (revoked, or the
 * installation changed): it is forgotten and the call made once more with a fresh one.
 */
function authorizedCall(deps: { rest: RestClient; tokens: InstallationTokens }, credential: AppCredential, first: string): GithubCall {
  let token = first;
  return async (method, path, json, accept) => {
    const send = () => deps.rest.call(method, path, { ...GITHUB_HEADERS, ...(accept ? { accept } : {}), authorization: `Bearer ${token}` }, json);
    const answer = await send();
    if (answer.status !== 401) return answer;
    deps.tokens.forget(credential);
    const fresh = await deps.tokens.get(credential);
    if ("refused" in fresh) return answer;
    token = fresh.token;
    return send();
  };
}

async function read(call: GithubCall, base: string, pr: Assigned, args: ReadArgs): Promise<ToolAnswer> {
  const page = args.page ?? 1;
  const limit = args.limit ?? DEFAULT_LIMIT;
  const query = `?page=${page}&per_page=${limit}`;
  switch (args.section) {
    case undefined: {
      const answer = await call("GET", `${base}/pulls/${pr.number}`);
      return answer.status === 200 ? { ok: true, value: pullRequestOf(answer.body) } : refused(answer, `pull request #${pr.number}`);
    }
    case "diff":
      return diff(call, base, pr);
    case "files":
      return list(await call("GET", `${base}/pulls/${pr.number}/files${query}`), "files", fileOf, page, limit);
    case "discussion_comments":
      return list(await call("GET", `${base}/issues/${pr.number}/comments${query}`), "discussion_comments", commentOf, page, limit);
    case "review_comments":
      return list(await call("GET", `${base}/pulls/${pr.number}/comments${query}`), "review_comments", reviewCommentOf, page, limit);
  }
}

/** The unified diff (GitHub's diff media type), cut at DIFF_MAX_CHARS; one too large for GitHub or svc points to the files section. */
async function diff(call: GithubCall, base: string, pr: Assigned): Promise<ToolAnswer> {
  const tooLarge = { ok: true as const, value: { diff: "", truncated: true, note: "The diff is too large to read whole; read section files, page by page, for each file's patch." } };
  let answer: RestAnswer;
  try {
    answer = await call("GET", `${base}/pulls/${pr.number}`, undefined, "application/vnd.github.diff");
  } catch (err) {
    if (err instanceof AppError && err.cause instanceof ResponseTooLargeError) return tooLarge;
    throw err;
  }
  // GitHub answers 406 for a diff over its own limits (GitHub docs: "Pull requests", media types).
  if (answer.status === 406) return tooLarge;
  if (answer.status !== 200) return refused(answer, `the diff of pull request #${pr.number}`);
  const text = answer.text ?? "";
  if (text.length <= DIFF_MAX_CHARS) return { ok: true, value: { diff: text, truncated: false } };
  const note = `The diff has ${text.length} characters; only the first ${DIFF_MAX_CHARS} are here. Read section files, page by page, for the rest. Binary files show no lines.`;
  return { ok: true, value: { diff: text.slice(0, DIFF_MAX_CHARS), truncated: true, note } };
}

function list(answer: RestAnswer, name: string, itemOf: (item: unknown) => Record<string, unknown>, page: number, limit: number): ToolAnswer {
  if (answer.status !== 200 || !Array.isArray(answer.body)) return refused(answer, name.replace(/_/g, " "));
  const items = answer.body.map(itemOf);
  // A full page may have a next one; GitHub's Link header would say, an empty next page costs one call.
  return { ok: true, value: { [name]: items, page, ...(items.length === limit ? { next_page: page + 1 } : {}) } };
}

async function inlineComment(call: GithubCall, base: string, pr: Assigned, args: InlineArgs): Promise<ToolAnswer> {
  const request: Record<string, unknown> = { body: args.body, commit_id: args.commit_id, path: args.path, line: args.line, side: args.side };
  if (args.start_line !== undefined) Object.assign(request, { start_line: args.start_line, start_side: args.start_side });
  const answer = await call("POST", `${base}/pulls/${pr.number}/comments`, request);
  if (answer.status === 422) {
    const where = `line ${args.start_line !== undefined ? `${args.start_line}-` : ""}${args.line} (${args.side}) of ${args.path} at commit ${args.commit_id.slice(0, 12)}`;
    return { ok: false, message: `GitHub refused the inline comment (${refusalReason(answer)}): ${where} is probably not part of the pull request's diff, or the commit is not its head. Read section diff or files and use a line the diff shows; nothing was posted.` };
  }
  return posted(answer, "the inline comment");
}

function posted(answer: RestAnswer, what: string): ToolAnswer {
  if (answer.status !== 201) return refused(answer, what);
  const body = typeof answer.body === "object" && answer.body !== null ? (answer.body as Record<string, unknown>) : {};
  const value: Record<string, unknown> = {};
  if (typeof body["id"] === "number") value["id"] = body["id"];
  if (typeof body["html_url"] === "string") value["html_url"] = body["html_url"];
  return { ok: true, value };
}

/** A 4xx GitHub answered: a tool error naming what was refused and why (a 5xx or rate limit never reaches here). */
function refused(answer: RestAnswer, what: string): ToolAnswer {
  const hint = answer.status === 404 ? "; it does not exist, or the App's installation cannot see it" : answer.status === 403 ? "; the App may lack the permission (Pull requests: Read & write to comment)" : "";
  return { ok: false, message: `GitHub refused ${what} (HTTP ${answer.status}: ${refusalReason(answer)})${hint}` };
}
