import fs from 'node:fs';
import path from 'node:path';
import type { Beat, Heartbeat, HeartbeatStore } from './heartbeat.store';
import { Slot, readSlot, writeSlots } from './heartbeat-slots';
import { lineRoom, writeLine } from './snapshot-lines';

/** Where and how often the embedded store writes its sightings down. */
export type HeartbeatSnapshot = { readonly file: string; readonly everyMs: number };

/** Bytes per write of a snapshot (~4,000 lines): the event loop is never held for a whole fleet. */
const SNAPSHOT_SLICE_BYTES = 256 * 1024;

/** Writes `length` bytes of `buf` at the file's position, however many calls it takes. */
const writeAll = async (out: fs.promises.FileHandle, buf: Buffer, length: number) => {
  for (let done = 0; done < length;) {
    done += (await out.write(buf, done, length - done)).bytesWritten;
  }
};

export class MemoryHeartbeatStore implements HeartbeatStore {
  /** One slot per node, overwritten in place (`writeSlots`). */
  private readonly beats = new Map<string, Slot>();
  /** Reports could not be received before this process started: recordable since then. */
  private readonly startedAt = Date.now();
  private dirty = false;
  private saving: Promise<void> | null = null;
  /** The snapshot's write buffer, made at the first save. */
  private slice: Buffer | null = null;
  private readonly timer: NodeJS.Timeout | null = null;

  /**
   * With `snapshot`, the sightings outlive the process, as the event log does: they are read
   * back at start, written down every `everyMs` (a file replaced whole) and at close. Without
   * them, a node that fell silent around a restart went offline at its last recorded change,
   * not its last report, and its sessions' bills ended there: minutes of running time unbilled,
   * and a false `lastSeenAt` in the log. A crash loses the sightings since the last snapshot that
   * finished: about one period.
   */
  constructor(private readonly snapshot?: HeartbeatSnapshot) {
    if (!snapshot) return;
    fs.mkdirSync(path.dirname(snapshot.file), { recursive: true, mode: 0o700 });
    this.load(snapshot.file);
    this.timer = setInterval(() => void this.save().catch(() => undefined), snapshot.everyMs);
    this.timer.unref();
  }

  private load(file: string): void {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const line of text.split('\n')) {
      const [nodeId, seen, observed] = line.split(' ');
      const seenAt = Number(seen);
      if (!nodeId || !Number.isFinite(seenAt)) continue; // a torn or foreign line: skipped
      const observedAt = observed ? Number(observed) : null;
      this.beats.set(nodeId, {
        seenAt,
        observedAt: observedAt !== null && Number.isFinite(observedAt) ? observedAt : null,
      });
    }
  }

  /** Writes every sighting to a new file, then puts it in place of the last one. */
  save(): Promise<void> {
    if (!this.snapshot) return Promise.resolve();
    if (this.saving) return this.saving;
    if (!this.dirty) return Promise.resolve();
    this.dirty = false;
    const { file } = this.snapshot;
    const next = `${file}.next`;
    this.saving = (async () => {
      const out = await fs.promises.open(next, 'w');
      try {
        // One buffer for every save (saves never overlap), filled with lines, written when full.
        const buf = (this.slice ??= Buffer.allocUnsafe(SNAPSHOT_SLICE_BYTES));
        let used = 0;
        // Slots change in place and new nodes are appended while this runs: each line is the
        // node's sighting as of its turn, none older than when the snapshot began.
        for (const [nodeId, slot] of this.beats) {
          const room = lineRoom(nodeId.length);
          if (used + room > buf.length) {
            await writeAll(out, buf, used);
            used = 0;
          }
          if (room <= buf.length) used = writeLine(buf, used, nodeId, slot.seenAt, slot.observedAt);
          else {
            // An id longer than the buffer (none the API makes): a line of its own.
            const line = Buffer.allocUnsafe(room);
            await writeAll(out, line, writeLine(line, 0, nodeId, slot.seenAt, slot.observedAt));
          }
        }
        if (used > 0) await writeAll(out, buf, used);
        await out.datasync();
      } finally {
        await out.close();
      }
      await fs.promises.rename(next, file);
    })()
      .catch((error: unknown) => {
        this.dirty = true; // try again next period
        throw error;
      })
      .finally(() => {
        this.saving = null;
      });
    return this.saving;
  }

  async touch(beats: readonly Beat[]): Promise<void> {
    this.write(beats);
  }

  touchNow(beats: readonly Beat[]): void {
    this.write(beats);
  }

  async get(nodeIds: readonly string[]): Promise<Array<Heartbeat | null>> {
    return this.read(nodeIds);
  }

  getNow(nodeIds: readonly string[]): Array<Heartbeat | null> {
    return this.read(nodeIds);
  }

  private write(beats: readonly Beat[]): void {
    if (beats.length > 0) this.dirty = true;
    writeSlots(this.beats, beats);
  }

  private read(nodeIds: readonly string[]): Array<Heartbeat | null> {
    return nodeIds.map((id) => readSlot(this.beats, id));
  }

  async remove(nodeId: string): Promise<void> {
    if (this.beats.delete(nodeId)) this.dirty = true;
  }

  recordedHere(nodeIds: readonly string[]): Array<Heartbeat | null> {
    return this.read(nodeIds);
  }

  restoredAt(): number {
    return this.startedAt;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.saving?.catch(() => undefined);
    await this.save();
  }

  /** Test hook: what a restart of the embedded store loses. */
  clear(): void {
    this.beats.clear();
  }
}
