import { InvalidArgumentError } from "commander";
import type { Context } from "../context.js";
import { parseCount } from "./orgs.js";

/** `--limit` of the list commands: how many items at most, across pages. */
export const limitOption = ["--limit <n>", "at most this many", parseCount, 100] as const;

export type OwnerKind = "org" | "project" | "user";

export const ownerKind = (value: string): OwnerKind => {
  if (value !== "org" && value !== "project" && value !== "user") throw new InvalidArgumentError("org, project or user");
  return value;
};

/** The owner of a new secret or skill: a project owner is the current project. */
export async function ownerOf(ctx: Context, kind: OwnerKind) {
  return kind === "project" ? { kind: "project" as const, project_id: await ctx.project() } : { kind };
}
