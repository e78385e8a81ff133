import { isStorableText } from "../../platform/storable.js";
import type { PermissionMode } from "../../runtime/definition.js";
import type { PermissionProfile } from "../../runtime/tools/catalog.js";
import type { ConfigIssues } from "./issues.js";
import type { PathSegment } from "./source.js";

/** Small readers shared by the sections of a config document: each reports its problem and returns undefined. */

export type Obj = Record<string, unknown>;
export type Path = readonly PathSegment[];

const INT32 = 2147483647;
export const MAX_NAME = 64;

export function readPermission(issues: ConfigIssues, toolPath: Path, tool: Obj, profile: PermissionProfile): PermissionMode {
  if (!has(tool, "permission")) return profile.defaultPermission;
  const path = [...toolPath, "permission"];
  const value = tool["permission"];
  if (!isObject(value)) {
    issues.add(path, `must be an object such as {mode: always_ask}; got ${describe(value)}`);
    return profile.defaultPermission;
  }
  unknownKeys(issues, path, value, ["mode"]);
  const modes = profile.permissionModes.join(", ");
  if (!has(value, "mode")) {
    issues.add([...path, "mode"], `is required: one of ${modes}`);
    return profile.defaultPermission;
  }
  const mode = value["mode"];
  if (!profile.permissionModes.includes(mode as PermissionMode)) {
    issues.add([...path, "mode"], `must be one of: ${modes}; got ${describe(mode)}`);
    return profile.defaultPermission;
  }
  return mode as PermissionMode;
}

export function unknownKeys(issues: ConfigIssues, path: Path, value: Obj, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) issues.addAtKey([...path, key], `unknown key; expected one of: ${allowed.join(", ")}`);
  }
}

export function required(issues: ConfigIssues, path: Path, value: Obj, key: string, what: string, maxLength = MAX_NAME): string | undefined {
  if (!has(value, key)) {
    issues.add([...path, key], `is required: ${what}`);
    return undefined;
  }
  return text(issues, [...path, key], value[key], maxLength);
}

/** A string with something in it besides whitespace, and no NUL (PostgreSQL cannot store one). */
export function text(issues: ConfigIssues, path: Path, value: unknown, maxLength: number): string | undefined {
  if (typeof value !== "string") issues.add(path, `must be a string; got ${describe(value)}`);
  else if (value.trim() === "") issues.add(path, "must not be empty");
  else if (value.includes("\u0000")) issues.add(path, "must not contain NUL characters");
  else if (!isStorableText(value)) issues.add(path, "must not contain unpaired UTF-16 surrogates");
  else if (value.length > maxLength) issues.add(path, `must be at most ${maxLength} characters`);
  else return value;
  return undefined;
}

export function count(issues: ConfigIssues, path: Path, value: unknown, min: number): number | undefined {
  if (typeof value === "number" && Number.isInteger(value) && value >= min && value <= INT32) return value;
  issues.add(path, `must be a whole number from ${min} to ${INT32}; got ${describe(value)}`);
  return undefined;
}

/** Own keys only: a key named like an Object.prototype member must not count as present. */
export function has(value: Obj, key: string): boolean {
  return Object.hasOwn(value, key);
}

export function isObject(value: unknown): value is Obj {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** The kind of a value, as an author would call it, for "got …" in messages. */
export function describe(value: unknown): string {
  if (value === null || value === undefined) return "nothing";
  if (typeof value === "string") return value.length > 40 ? `a string ("${value.slice(0, 37)}…")` : JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return "a list";
  return isObject(value) ? "an object" : "a value that is not JSON data";
}

