import { StoredEvent } from '../../eventstore/src/port';
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

export const reactorSubscriber = (reactor: Reactor, checkpoints: CheckpointStore): Subscriber => ({
  name: `reactor:${reactor.name}`,
  loadCheckpoint: () => checkpoints.load(reactor.name),
  async handle(events) {
    for (const event of events) await reactor.react(event);
  },
  saveCheckpoint: (position) => checkpoints.save(reactor.name, position),
});
