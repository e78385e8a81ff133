import { closeSync, openSync, readSync, statSync } from "node:fs";

/*
 * A process's output as svc reads it: byte cursors are offsets into the stream's file (stdout or stderr),
 * counted from the process's first byte, so they stay valid however much is written later. Only the last
 * RETAINED_BYTES of each stream are served: a read from a cursor before that window starts at the window
 * and says `truncated`, as the reference's read_process does when retention dropped older output.
 */

/** Output kept readable per stream (the reference's retention, 1 MiB). */
export const RETAINED_BYTES = 1024 * 1024;

export interface Slice {
  text: string;
  /** Where the next read of the stream starts: after the bytes returned. */
  next: number;
  /** Bytes before the cursor asked for were dropped by retention. */
  dropped: boolean;
  /** The stream's size now. */
  size: number;
}

export function streamSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Up to `maxBytes` of the stream from `cursor`, cut before a UTF-8 character split at the end. */
export function readSlice(path: string, cursor: number, maxBytes: number): Slice {
  const size = streamSize(path);
  const windowStart = Math.max(0, size - RETAINED_BYTES);
  const start = Math.min(Math.max(cursor, windowStart), size);
  const dropped = cursor < windowStart;
  const length = Math.min(maxBytes, size - start);
  if (length <= 0) return { text: "", next: Math.max(start, Math.min(cursor, size)), dropped, size };
  const buffer = Buffer.alloc(length);
  const fd = openSync(path, "r");
  let read: number;
  try {
    read = readSync(fd, buffer, 0, length, start);
  } finally {
    closeSync(fd);
  }
  const raw = buffer.subarray(0, read);
  // A read too short for even one whole character returns its bytes, so a reader never stalls.
  const cut = completeCharacters(raw);
  const whole = cut.length > 0 ? cut : raw;
  return { text: whole.toString("utf8"), next: start + whole.length, dropped, size };
}

/**
 * `bytes` without a multi-byte UTF-8 character cut at its end, so the next read starts on that character.
 * Bytes that are not UTF-8 at all are left as they are (the server replaces what it cannot store).
 */
export function completeCharacters(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? bytes.subarray(0, bytes.length - back) : bytes;
  }
  return bytes;
}
