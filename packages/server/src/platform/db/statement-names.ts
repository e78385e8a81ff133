/*
 * Which statement texts get a name (a prepared statement, parsed and described once per session). A
 * statement run once or twice is not worth a slot; the names are bounded because a session keeps every
 * statement it prepared, so a flood of one-off texts must not grow it. Used by the PostgreSQL pool's
 * clients (prepared-statements.ts) and by the embedded database's thread (embedded-worker/named-queries.ts).
 */

const SIGHTINGS_BEFORE_NAMING = 3;
const MAX_NAMED = 1_000;
// Counting is bounded too: when full it starts over, which only delays naming.
const MAX_COUNTED = 10_000;

export class StatementNames {
  private readonly names = new Map<string, string>();
  private readonly sightings = new Map<string, number>();
  private issued = 0;

  /** The statement name for `text`, or undefined while it is not (yet) worth one. */
  nameOf(text: string): string | undefined {
    const name = this.names.get(text);
    if (name !== undefined || this.names.size >= MAX_NAMED) return name;
    const seen = (this.sightings.get(text) ?? 0) + 1;
    if (seen < SIGHTINGS_BEFORE_NAMING) {
      if (this.sightings.size >= MAX_COUNTED) this.sightings.clear();
      this.sightings.set(text, seen);
      return undefined;
    }
    this.sightings.delete(text);
    const named = `svc_${++this.issued}`;
    this.names.set(text, named);
    return named;
  }

  /** Gives up `text`'s name (its statement could not be prepared); names are never reused. */
  drop(text: string): void {
    this.names.delete(text);
  }

  /** Forgets every name: the session's prepared statements were deallocated. */
  clear(): void {
    this.names.clear();
    this.sightings.clear();
  }
}
