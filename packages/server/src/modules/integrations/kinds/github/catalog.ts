import { idPattern } from "../../../../platform/ids.js";
import type { IntegrationKindCatalog } from "../../kind.js";

/**
 * The `github_pr` catalog (docs/integrations.md; reference docs: integrations/github "Select PR tools",
 * "Configure incoming PR work"). Every tool acts on the one pull request the launcher assigned, so the
 * model names neither repository nor pull request. GitHub has no interaction handler.
 */
const body = { type: "string", minLength: 1, maxLength: 65536 };
const side = { type: "string", enum: ["LEFT", "RIGHT"] };
const positive = { type: "integer", minimum: 1 };
const NUMERIC_ID = "^[0-9]{1,20}$";

export const githubPrCatalog: IntegrationKindCatalog = {
  name: "github_pr",
  description: "A GitHub App: a pull request opened, or a mention in its comments, starts a reviewer agent; later comments steer it and new commits are queued for it.",
  capabilities: {
    tools: {
      read: {
        description: "Reads the assigned pull request: its details, or one section (diff, files, discussion_comments, review_comments) with page and limit.",
        input_schema: {
          type: "object",
          properties: {
            section: { type: "string", enum: ["diff", "files", "discussion_comments", "review_comments"], description: "Omit for the pull request's details (title, body, head sha...)." },
            page: { ...positive, description: "The page of a list section, from 1." },
            limit: { type: "integer", minimum: 1, maximum: 100, description: "Items per page of a list section (default 30)." },
          },
          additionalProperties: false,
        },
      },
      discussion_comment: {
        description: "Posts a comment in the assigned pull request's conversation.",
        input_schema: { type: "object", properties: { body }, required: ["body"], additionalProperties: false },
      },
      inline_comment: {
        description: "Posts a review comment on the assigned pull request's diff; start_line and start_side together make it span several lines.",
        input_schema: {
          type: "object",
          properties: {
            body,
            commit_id: { type: "string", pattern: "^[0-9a-f]{40}([0-9a-f]{24})?$", description: "The pull request's head commit sha (read: head.sha)." },
            path: { type: "string", minLength: 1, maxLength: 4096, description: "The file's path in the repository, as the diff names it." },
            line: { ...positive, description: "The line the comment is on (the range's last line); it must be part of the diff." },
            side: { ...side, description: "LEFT: a line of the old file (deleted or context); RIGHT: a line of the new file (added or context)." },
            start_line: { ...positive, description: "The first line of a multi-line range; needs start_side." },
            start_side: { ...side, description: "The side of start_line; needs start_line." },
          },
          required: ["body", "commit_id", "path", "line", "side"],
          dependencies: { start_line: ["start_side"], start_side: ["start_line"] },
          additionalProperties: false,
        },
      },
      reply: {
        description: "Replies to a review comment of the assigned pull request.",
        input_schema: {
          type: "object",
          properties: { comment_id: { ...positive, description: "A review comment's id (read: review_comments)." }, body },
          required: ["comment_id", "body"],
          additionalProperties: false,
        },
      },
    },
    settings: {
      description:
        "The integration's settings. launcher starts each slot's profile when a pull request opens (trigger pull_request_opened) or when the app is " +
        "mentioned in a new human comment (trigger mention), in the installation's repositories or one repository.",
      input_schema: {
        type: "object",
        properties: {
          launcher: {
            type: "object",
            properties: {
              trigger: { type: "string", enum: ["pull_request_opened", "mention"] },
              scope_kind: { type: "string", enum: ["installation", "repository"] },
              scope_ref: { type: "string", pattern: NUMERIC_ID, description: "The installation id, or a repository's numeric id." },
              slots: {
                type: "array",
                items: {
                  type: "object",
                  properties: { key: { type: "string", pattern: "^[a-z][a-z0-9_-]{0,31}$" }, agent_profile_id: { type: "string", pattern: idPattern("agentProfile") } },
                  required: ["key", "agent_profile_id"],
                  additionalProperties: false,
                },
                minItems: 1,
                maxItems: 10,
              },
            },
            required: ["trigger", "scope_kind", "scope_ref", "slots"],
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
    },
    subscription: {
      conversation_schema: {
        type: "object",
        properties: { repository_id: positive, pull_request: positive },
        required: ["repository_id", "pull_request"],
        additionalProperties: false,
      },
    },
  },
};
