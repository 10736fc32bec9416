import { LOG_START, LogPosition, StoredEvent, laterPosition } from '@fleet/eventstore/port';
import { CheckpointStore } from './checkpoint-store';
import { Subscriber } from './subscription-runner';

/**
 * A reactor turns events into commands or jobs (sagas, process managers, notifiers).
 * It must be idempotent: after a crash the events since its checkpoint come again.
 */
export type Reactor = {
  readonly name: string;
  readonly react: (event: StoredEvent) => Promise<void>;
};

export type ReactorOptions = {
  /**
   * At most one checkpoint write per this many ms (default 100); the latest position is written
   * when the window ends and when the runner stops. Under load a reactor handles a small page
   * per append, and a write per page cost as much as the reactions; a crash replays at most
   * this window's events, which a reactor must tolerate anyway (at-least-once).
   */
  readonly saveEveryMs?: number;
};

/** The subscription name a reactor runs under (in status and metrics; its checkpoint is kept under its own name). */
export const reactorSubscriberName = (reactor: Pick<Reactor, 'name'>): string =>
  `reactor:${reactor.name}`;

export const reactorSubscriber = (
  reactor: Reactor,
  checkpoints: CheckpointStore,
  options: ReactorOptions = {},
): Subscriber => {
  const every = options.saveEveryMs ?? 100;
  let latest: LogPosition = LOG_START;
  let written: LogPosition = LOG_START;
  let lastWriteAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  // Writes run one after another, so a later position is never overwritten by an earlier one.
  let writing: Promise<void> = Promise.resolve();
  const write = (): Promise<void> => {
    lastWriteAt = performance.now();
    writing = writing
      .catch(() => undefined)
      .then(async () => {
        if (latest <= written) return;
        const position = latest;
        await checkpoints.save(reactor.name, position);
        written = laterPosition(written, position);
      });
    return writing;
  };
  return {
    name: reactorSubscriberName(reactor),
    loadCheckpoint: async () => {
      written = await checkpoints.load(reactor.name);
      return written;
    },
    async handle(events) {
      for (const event of events) await reactor.react(event);
    },
    async saveCheckpoint(position) {
      latest = laterPosition(latest, position);
      const wait = lastWriteAt + every - performance.now();
      if (wait <= 0) return write();
      // Within the window: the timer writes the latest position when it ends (a failed write is
      // retried by the next page's save or at stop; the in-memory checkpoint has moved on).
      timer ??= setTimeout(() => {
        timer = undefined;
        write().catch(() => undefined);
      }, wait);
      timer.unref?.();
    },
    async stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      await write();
    },
  };
};
