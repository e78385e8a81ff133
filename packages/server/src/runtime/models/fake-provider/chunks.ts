/** Words with their trailing whitespace, so the pieces concatenate back to the text. */
export function textPieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** Tool arguments in small fixed-size pieces, to exercise argument deltas. */
export function argumentPieces(json: string, size = 12): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < json.length; i += size) pieces.push(json.slice(i, i + size));
  return pieces;
}

export function pad(sequence: number): string {
  return String(sequence).padStart(4, "0");
}

/** Deterministic stand-in for provider-encrypted reasoning / signatures. */
export function fakeOpaque(prefix: string, text: string): string {
  return `${prefix}${Buffer.from(text, "utf8").toString("base64")}`;
}

/** A fixed timestamp keeps every answer byte-for-byte reproducible. */
export const FAKE_CREATED_AT = 1_767_225_600; // 2026-01-01T00:00:00Z
