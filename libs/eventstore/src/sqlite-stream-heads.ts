import { Statements } from './sqlite-schema';

/** Stream heads remembered in memory (~100 bytes each). */
const HEADS_CAPACITY = 250_000;

/**
 * Stream heads a connection knows exactly (-1: no such stream): every head it read, and every
 * head its own commits moved. Another connection's commit changes `data_version` (own commits
 * do not), and the whole map is dropped, so an answer is never stale.
 */
export class StreamHeads {
  private readonly heads = new Map<string, number>();
  private headsVersion = -1;

  constructor(
    private readonly stmt: Pick<Statements, 'head' | 'heads' | 'dataVersion'>,
    /** The only connection to the file: every head it knows is exact. */
    private readonly exclusive: boolean,
  ) {}

  revision(streamId: string): number | null {
    const known = this.known().get(streamId);
    if (known !== undefined) return known < 0 ? null : known;
    const revision = this.stmt.head.get(streamId)?.[0] ?? null;
    this.remember(streamId, revision ?? -1);
    return revision;
  }

  /** Known heads from memory; the rest in one statement (a report of 100 nodes checks 100). */
  revisions(streamIds: readonly string[]): Array<number | null> {
    if (streamIds.length === 0) return [];
    const known = this.known();
    const out: Array<number | null> = new Array(streamIds.length);
    let missing: number[] | undefined;
    for (let i = 0; i < streamIds.length; i++) {
      const head = known.get(streamIds[i]);
      if (head === undefined) (missing ??= []).push(i);
      else out[i] = head < 0 ? null : head;
    }
    if (missing) {
      const read = this.stmt.heads.all(JSON.stringify(missing.map((i) => streamIds[i])));
      for (let j = 0; j < missing.length; j++) {
        out[missing[j]] = read[j];
        this.remember(streamIds[missing[j]], read[j] ?? -1);
      }
    }
    return out;
  }

  remember(streamId: string, revision: number): void {
    // Bounded: past the limit start over (a miss is one indexed read, never a wrong answer).
    if (this.heads.size >= HEADS_CAPACITY && !this.heads.has(streamId)) this.heads.clear();
    this.heads.set(streamId, revision);
  }

  /** The heads map, emptied first if another connection committed since the last look. */
  private known(): Map<string, number> {
    if (this.exclusive) return this.heads;
    const version = this.stmt.dataVersion.get() as number;
    if (version !== this.headsVersion) {
      this.heads.clear();
      this.headsVersion = version;
    }
    return this.heads;
  }
}
