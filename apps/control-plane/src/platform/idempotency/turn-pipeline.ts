import type { RequestPathRedis } from '../runtime/redis-unavailable';

type Queued = {
  readonly command: string;
  readonly args: ReadonlyArray<string | number>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
};

/**
 * The Redis commands asked for in one turn of the event loop, sent together on `setImmediate`
 * as one pipeline: one write to the socket and one round trip for every request of the turn,
 * instead of one each. Each caller gets its own command's answer or refusal; a batch that
 * fails as a whole (Redis out of reach, or silent past the command timeout) fails every
 * caller of it with that error, mapped by `failed` (e.g. to UnavailableError).
 */
export class TurnPipeline {
  private queue: Queued[] = [];
  private scheduled = false;
  /** Batches sent (pipelines), for tests. */
  batches = 0;

  constructor(
    private readonly link: RequestPathRedis,
    private readonly failed: (error: unknown) => unknown,
  ) {}

  send<T>(command: string, ...args: Array<string | number>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ command, args, resolve: resolve as (value: unknown) => void, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(this.flush);
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const queue = this.queue;
    this.queue = [];
    this.batches++;
    const pipeline = this.link.client.pipeline();
    for (const q of queue) pipeline.call(q.command, ...q.args);
    this.link.bounded(pipeline.exec()).then(
      (results) => {
        queue.forEach((q, i) => {
          const [error, value] = results?.[i] ?? [new Error('no answer in the pipeline'), null];
          if (error) q.reject(this.mapped(error));
          else q.resolve(value);
        });
      },
      (error: unknown) => {
        const reason = this.mapped(error);
        for (const q of queue) q.reject(reason);
      },
    );
  };

  private mapped(error: unknown): unknown {
    try {
      return this.failed(error);
    } catch (thrown) {
      return thrown;
    }
  }
}
