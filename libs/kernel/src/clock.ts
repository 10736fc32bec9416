/** Where process managers and adapters read the time; tests pass a fixed or stepped clock. */
export type Clock = { readonly now: () => Date };

export const systemClock: Clock = { now: () => new Date() };

/** A clock that reads `at` until moved: for specs and tests that step time by hand. */
export const manualClock = (
  at: Date | string,
): Clock & { set(to: Date | string): void; advance(ms: number): void } => {
  let current = new Date(at);
  return {
    now: () => new Date(current),
    set: (to) => {
      current = new Date(to);
    },
    advance: (ms) => {
      current = new Date(current.getTime() + ms);
    },
  };
};
