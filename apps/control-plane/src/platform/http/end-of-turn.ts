import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Calls put off to the end of the event loop's turn: each runs once, in the order given, in
 * the turn's check phase (`setImmediate`), after every I/O callback of the turn and the
 * promises they settled. One that throws is reported and does not stop the others; one
 * deferred while the batch runs goes to the next turn's batch.
 */
export class EndOfTurn {
  private calls: Array<() => void> = [];
  private scheduled = false;

  constructor(private readonly onError: (error: unknown) => void) {}

  /** Calls waiting for the end of the turn. */
  get waiting(): number {
    return this.calls.length;
  }

  defer(call: () => void): void {
    this.calls.push(call);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.run);
    }
  }

  private readonly run = (): void => {
    const calls = this.calls;
    this.calls = [];
    this.scheduled = false;
    for (let i = 0; i < calls.length; i++) {
      try {
        calls[i]();
      } catch (error) {
        this.onError(error);
      }
    }
  };
}

type WriteChunks = Parameters<NonNullable<Socket['_writev']>>[0];
type WriteDone = (error?: Error | null) => void;

const writingAtEndOfTurn = new WeakSet<Server>();

/** Whether `server`'s connections write at the end of the turn (writeAtEndOfTurn below). */
export const writesAtEndOfTurn = (server: Server): boolean => writingAtEndOfTurn.has(server);

/**
 * Writes what the server sends on each connection at the end of the event loop's turn instead
 * of at once. Only the system call waits: Node and Fastify see every response written and
 * ended as before (`reply.sent`, the hooks' order, `res.writableEnded`), and the socket's own
 * stream keeps a connection's writes in order, one at a time.
 *
 * Why: under load one turn reads dozens of requests. Written one by one, each response found
 * its client asleep (it had answered the previous one at once) and the send woke it; on a VM
 * that wake is an interrupt to another vCPU, the largest cost found on the hot routes
 * (docs/PERFORMANCE.md). Written back to back, the first wakes the client and the rest are in
 * its sockets when it runs. Redis writes its replies the same way, all together before it
 * sleeps again. A response waits at most for the rest of its turn; an idle server's turn is
 * one request, so it is not held back.
 */
export const writeAtEndOfTurn = (server: Server, onError: (error: unknown) => void): EndOfTurn => {
  const turn = new EndOfTurn(onError);
  writingAtEndOfTurn.add(server);
  server.on('connection', (socket: Socket) => {
    const writev = socket._writev;
    const write = socket._write;
    const destroy = socket.destroy;
    // The stream calls _write/_writev again only once the last one is done: one at most waits.
    let waiting: (() => void) | null = null;
    const flush = (): void => {
      const call = waiting;
      waiting = null;
      call?.();
    };
    if (writev) {
      socket._writev = (chunks: WriteChunks, done: WriteDone) => {
        waiting = () => writev.call(socket, chunks, done);
        turn.defer(flush);
      };
    }
    socket._write = (chunk: unknown, encoding: BufferEncoding, done: WriteDone) => {
      waiting = () => write.call(socket, chunk, encoding, done);
      turn.defer(flush);
    };
    // Written, then destroyed at once (a refusal the parser answered, a server closing its
    // connections): the write goes first, as it would have without waiting for the turn.
    socket.destroy = (error?: Error) => {
      flush();
      return destroy.call(socket, error);
    };
  });
  return turn;
};
