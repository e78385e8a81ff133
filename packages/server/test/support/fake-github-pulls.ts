/**
 * The pull-request part of the fake GitHub (fake-github.ts): GitHub's REST shapes for a pull request,
 * its diff (the `application/vnd.github.diff` media type), files, issue comments and review comments,
 * under `/repositories/{id}/…`, answered to an installation token whose installation holds the
 * repository. A review comment on a line the diff does not show is refused with 422 as GitHub does.
 */

export interface FakeFile {
  filename: string;
  /** The unified diff hunks of the file, as GitHub's `patch` member. */
  patch: string;
}

export interface FakeComment {
  id: number;
  body: string;
  user: { login: string; id: number; type: string };
  /** Review comments only. */
  path?: string;
  line?: number;
  side?: string;
  start_line?: number | null;
  start_side?: string | null;
  commit_id?: string;
  in_reply_to_id?: number;
}

export interface FakePull {
  repositoryId: number;
  installationId: string;
  fullName: string;
  number: number;
  title: string;
  body: string;
  headSha: string;
  baseSha: string;
  files: FakeFile[];
  issueComments: FakeComment[];
  reviewComments: FakeComment[];
}

export type Answer = { status: number; body?: unknown; text?: string; headers?: Record<string, string> };

let nextId = 900_000;

export function diffOf(pull: FakePull): string {
  return pull.files.map((f) => `diff --git a/${f.filename} b/${f.filename}\n--- a/${f.filename}\n+++ b/${f.filename}\n${f.patch}\n`).join("");
}

/** The lines a review comment may address on each side of a file's patch (GitHub: "the line must be part of the diff"). */
function diffLines(patch: string): { LEFT: Set<number>; RIGHT: Set<number> } {
  const lines = { LEFT: new Set<number>(), RIGHT: new Set<number>() };
  let left = 0;
  let right = 0;
  for (const row of patch.split("\n")) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(row);
    if (hunk) [left, right] = [Number(hunk[1]), Number(hunk[2])];
    else if (row.startsWith("-")) lines.LEFT.add(left++);
    else if (row.startsWith("+")) lines.RIGHT.add(right++);
    else if (row.startsWith(" ")) {
      lines.LEFT.add(left++);
      lines.RIGHT.add(right++);
    }
  }
  return lines;
}

const USER = { login: "svc-reviewer[bot]", id: 41898282, type: "Bot" };

function pullJson(pull: FakePull): object {
  const [owner] = pull.fullName.split("/");
  const additions = pull.files.reduce((n, f) => n + f.patch.split("\n").filter((l) => l.startsWith("+")).length, 0);
  const deletions = pull.files.reduce((n, f) => n + f.patch.split("\n").filter((l) => l.startsWith("-")).length, 0);
  return {
    id: pull.repositoryId * 1000 + pull.number,
    number: pull.number,
    state: "open",
    title: pull.title,
    body: pull.body,
    draft: false,
    merged: false,
    mergeable: null,
    html_url: `https://github.com/${pull.fullName}/pull/${pull.number}`,
    user: { login: "octocat", id: 583231, type: "User" },
    head: { label: `${owner}:feature`, ref: "feature", sha: pull.headSha, repo: { id: pull.repositoryId } },
    base: { label: `${owner}:main`, ref: "main", sha: pull.baseSha, repo: { id: pull.repositoryId } },
    additions,
    deletions,
    changed_files: pull.files.length,
    commits: 1,
    comments: pull.issueComments.length,
    review_comments: pull.reviewComments.length,
    created_at: "2026-01-05T10:00:00Z",
    updated_at: "2026-01-05T10:00:00Z",
    _links: { self: { href: `https://api.github.com/repos/${pull.fullName}/pulls/${pull.number}` } },
  };
}

function commentJson(pull: FakePull, comment: FakeComment): object {
  const kind = comment.path === undefined ? "issuecomment" : "discussion_r";
  const anchor = kind === "issuecomment" ? `#issuecomment-${comment.id}` : `#discussion_r${comment.id}`;
  return { ...comment, node_id: `C_${comment.id}`, html_url: `https://github.com/${pull.fullName}/pull/${pull.number}${anchor}`, created_at: "2026-01-05T11:00:00Z", updated_at: "2026-01-05T11:00:00Z", author_association: "NONE" };
}

function page<T>(items: T[], url: URL): T[] {
  const perPage = Math.min(Number(url.searchParams.get("per_page") ?? 30), 100);
  const at = Math.max(Number(url.searchParams.get("page") ?? 1), 1);
  return items.slice((at - 1) * perPage, at * perPage);
}

const validation = (field: string, message: string): Answer => ({
  status: 422,
  body: { message: "Validation Failed", errors: [{ resource: "PullRequestReviewComment", code: "custom", field, message }], documentation_url: "https://docs.github.com/rest/pulls/comments#create-a-review-comment-for-a-pull-request", status: "422" },
});

/** Answers a `/repositories/{id}/…` request for a pull request, or undefined when the path is none of these. */
export function pullsAnswer(pulls: FakePull[], installationId: string, method: string, url: URL, accept: string, body: Record<string, unknown>): Answer | undefined {
  const match = /^\/repositories\/(\d+)\/(pulls|issues)\/(\d+)(?:\/(files|comments)(?:\/(\d+)\/(replies))?)?$/.exec(url.pathname);
  if (!match) return undefined;
  const [, repositoryId, area, number, sub, commentId] = match;
  const pull = pulls.find((p) => String(p.repositoryId) === repositoryId && String(p.number) === number && p.installationId === installationId);
  const notFound = { status: 404, body: { message: "Not Found", documentation_url: "https://docs.github.com/rest", status: "404" } };
  if (!pull) return notFound;
  const route = `${method} ${area}${sub ? `/${sub}` : ""}${commentId ? "/replies" : ""}`;
  switch (route) {
    case "GET pulls":
      return accept.includes("diff") ? { status: 200, text: diffOf(pull), headers: { "content-type": "application/vnd.github.diff; charset=utf-8" } } : { status: 200, body: pullJson(pull) };
    case "GET pulls/files":
      return { status: 200, body: page(pull.files.map((f) => ({ sha: "0".repeat(40), filename: f.filename, status: "modified", additions: 1, deletions: 1, changes: 2, patch: f.patch })), url) };
    case "GET issues/comments":
      return { status: 200, body: page(pull.issueComments.map((c) => commentJson(pull, c)), url) };
    case "GET pulls/comments":
      return { status: 200, body: page(pull.reviewComments.map((c) => commentJson(pull, c)), url) };
    case "POST issues/comments": {
      const comment: FakeComment = { id: ++nextId, body: String(body["body"]), user: USER };
      pull.issueComments.push(comment);
      return { status: 201, body: commentJson(pull, comment) };
    }
    case "POST pulls/comments":
      return reviewComment(pull, body);
    case "POST pulls/comments/replies": {
      const parent = pull.reviewComments.find((c) => String(c.id) === commentId);
      if (!parent) return notFound;
      const reply: FakeComment = { ...parent, id: ++nextId, body: String(body["body"]), user: USER, in_reply_to_id: parent.id };
      pull.reviewComments.push(reply);
      return { status: 201, body: commentJson(pull, reply) };
    }
  }
  return notFound;
}

function reviewComment(pull: FakePull, body: Record<string, unknown>): Answer {
  if (body["commit_id"] !== pull.headSha) return validation("commit_id", "is not part of the pull request");
  const file = pull.files.find((f) => f.filename === body["path"]);
  if (!file) return validation("pull_request_review_thread.path", "could not be resolved");
  const side = body["side"] === "LEFT" ? "LEFT" : "RIGHT";
  const lines = diffLines(file.patch);
  if (!lines[side].has(Number(body["line"]))) return validation("pull_request_review_thread.line", "could not be resolved");
  if ((body["start_line"] === undefined) !== (body["start_side"] === undefined)) return validation("pull_request_review_thread.start_line", "start_line and start_side go together");
  const comment: FakeComment = {
    id: ++nextId,
    body: String(body["body"]),
    user: USER,
    path: file.filename,
    line: Number(body["line"]),
    side,
    start_line: typeof body["start_line"] === "number" ? body["start_line"] : null,
    start_side: typeof body["start_side"] === "string" ? body["start_side"] : null,
    commit_id: pull.headSha,
  };
  pull.reviewComments.push(comment);
  return { status: 201, body: commentJson(pull, comment) };
}
