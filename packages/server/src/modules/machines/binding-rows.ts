import { randomInt } from "node:crypto";
import type { agentMachineBindings } from "../../db/schema/index.js";

export type BindingRow = typeof agentMachineBindings.$inferSelect;

const REF_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

/** `mchr-` and six base32 characters, unique per agent (the table's key catches the rare repeat). */
export function machineRef(): string {
  let ref = "mchr-";
  for (let i = 0; i < 6; i++) ref += REF_ALPHABET[randomInt(REF_ALPHABET.length)];
  return ref;
}
