/**
 * What the `read` tool hands the model from GitHub's answers (GitHub docs: REST "Pulls", "Issue comments",
 * "Pull request review comments"): only the members an agent reviewing uses, each checked, since GitHub's
 * answer is not trusted whole.
 */

type Json = Record<string, unknown>;

const objectOf = (value: unknown): Json => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {});

/** Copies the listed members whose values are strings, numbers, booleans or null. */
function pick(source: Json, members: readonly string[]): Json {
  const out: Json = {};
  for (const member of members) {
    const value = source[member];
    if (value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean") out[member] = value;
  }
  return out;
}

function login(user: unknown): Json {
  const u = objectOf(user);
  return typeof u["login"] === "string" ? { author: u["login"], ...(u["type"] === "Bot" ? { author_is_bot: true } : {}) } : {};
}

function ref(value: unknown): Json {
  return pick(objectOf(value), ["ref", "sha", "label"]);
}

export function pullRequestOf(body: unknown): Json {
  const pr = objectOf(body);
  return {
    ...pick(pr, ["number", "title", "body", "state", "draft", "merged", "mergeable", "html_url", "additions", "deletions", "changed_files", "commits", "comments", "review_comments", "created_at", "updated_at"]),
    ...login(pr["user"]),
    head: ref(pr["head"]),
    base: ref(pr["base"]),
  };
}

export function fileOf(item: unknown): Json {
  return pick(objectOf(item), ["filename", "status", "additions", "deletions", "changes", "previous_filename", "patch"]);
}

export function commentOf(item: unknown): Json {
  const comment = objectOf(item);
  return { ...pick(comment, ["id", "body", "created_at", "updated_at", "html_url"]), ...login(comment["user"]) };
}

export function reviewCommentOf(item: unknown): Json {
  const comment = objectOf(item);
  const members = ["id", "in_reply_to_id", "path", "line", "side", "start_line", "start_side", "original_line", "commit_id", "body", "created_at", "html_url"];
  return { ...pick(comment, members), ...login(comment["user"]) };
}
