import { AllStreamSubscription, END, excludeSystemEvents } from '@kurrent/kurrentdb-client';
import { ThrottledLog } from '@fleet/kernel/throttled-log';
import { STORE } from './kurrentdb-mapping';
import type { KurrentDbClientLike } from './kurrentdb-event-store';

/** A live subscription to `$all` that the store can stop. */
export type Watching = { stop(): void };

/**
 * One live subscription per listener, re-established with a backoff whenever it drops. Every
 * drop is logged (throttled) and never thrown: readers catch up from their own checkpoints
 * when told, at the drop and again once the new subscription is live.
 */
export const watchAll = (
  client: Pick<KurrentDbClientLike, 'subscribeToAll'>,
  listener: () => void,
  options: {
    readonly errors: ThrottledLog;
    readonly resubscribeMs: number;
    readonly resubscribeMaxMs: number;
  },
): Watching => {
  const { errors, resubscribeMs, resubscribeMaxMs } = options;
  let stopped = false;
  let current: AllStreamSubscription | undefined;
  let timer: NodeJS.Timeout | undefined;
  let backoffMs = resubscribeMs;
  let dropped = false;
  const notify = (): void => {
    try {
      listener();
    } catch (error) {
      errors.failure(`${STORE}: a listener of new events threw`, error);
    }
  };
  const resubscribeLater = (reason: unknown): void => {
    if (stopped || timer) return;
    dropped = true;
    const why = reason instanceof Error ? reason.message : String(reason);
    errors.failure(
      `${STORE}: the subscription to $all dropped (${why}); resubscribing in ${backoffMs} ms`,
      reason,
    );
    timer = setTimeout(subscribe, backoffMs);
    timer.unref();
    backoffMs = Math.min(backoffMs * 2, resubscribeMaxMs);
    notify();
  };
  const subscribe = (): void => {
    timer = undefined;
    if (stopped) return;
    let sub: AllStreamSubscription;
    try {
      sub = client.subscribeToAll({ fromPosition: END, filter: excludeSystemEvents() });
    } catch (error) {
      resubscribeLater(error);
      return;
    }
    current = sub;
    let ended = false;
    const end = (reason: unknown): void => {
      if (ended) return;
      ended = true;
      sub.unsubscribe().catch(() => undefined);
      resubscribeLater(reason);
    };
    sub.on('confirmation', () => {
      backoffMs = resubscribeMs;
      if (!dropped) return;
      dropped = false;
      errors.clear();
      notify(); // events appended while no subscription ran
    });
    sub.on('data', () => {
      backoffMs = resubscribeMs;
      notify();
    });
    sub.on('error', (error) => end(error));
    sub.on('end', () => end(new Error('the server ended it')));
    sub.on('close', () => end(new Error('the connection closed')));
  };
  subscribe();
  return {
    stop: (): void => {
      stopped = true;
      if (timer) clearTimeout(timer);
      current?.unsubscribe().catch(() => undefined);
    },
  };
};
