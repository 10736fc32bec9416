/** How a promise settled within a wait, or that the wait ran out first. */
export type Settled<T> =
  | { readonly status: 'fulfilled'; readonly value: T }
  | { readonly status: 'rejected'; readonly reason: unknown }
  | { readonly status: 'late' };

/**
 * Waits for `promise` at most `ms`. Late, the promise runs on and what it does later is the
 * caller's to handle (a rejection after the wait is not unhandled here: this attaches a
 * handler). The timer never keeps the process alive and is cleared once settled.
 */
export async function settleWithin<T>(promise: Promise<T>, ms: number): Promise<Settled<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ status: 'late' }), ms);
    timer.unref?.();
  });
  try {
    return await Promise.race([
      promise.then(
        (value): Settled<T> => ({ status: 'fulfilled', value }),
        (reason: unknown): Settled<T> => ({ status: 'rejected', reason }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
