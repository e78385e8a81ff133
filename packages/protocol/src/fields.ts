import { Type } from "typebox";

/** Daemon frames and request bodies refuse members they do not define. */
export const strict = { additionalProperties: false } as const;

/** Names a schema in svc's OpenAPI document (the server hoists it into `components.schemas`). */
export const component = (name: string) => ({ "x-svc-component": name }) as const;

/**
 * The prefixes of the public ids the protocol carries, each id `<prefix>_<26 characters of lowercase
 * base32>`. svc makes and reads them (packages/server/src/platform/ids.ts); its daemon module checks that
 * these prefixes are its own.
 */
export const PROTOCOL_ID_PREFIXES = {
  org: "org",
  machine: "mch",
  installation: "inst",
  daemonRuntime: "drt",
  process: "prc",
  processAction: "pac",
} as const;

export const PublicId = (kind: keyof typeof PROTOCOL_ID_PREFIXES) => Type.String({ pattern: `^${PROTOCOL_ID_PREFIXES[kind]}_[a-z2-7]{26}$` });

export const Uuid = Type.String({ format: "uuid" });
export const Timestamp = Type.String({ format: "date-time" });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

/** What svcd says about its machine (capacity, platform): any members, at most 64 of them. */
export const Free = Type.Unsafe<Record<string, unknown>>({ type: "object", additionalProperties: true, maxProperties: 64 });
