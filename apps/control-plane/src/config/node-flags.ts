/**
 * Node's command line for the control plane, wherever it is launched (`npm start`, the
 * Dockerfile, the bench's app servers; a unit test holds the first two to this list).
 *
 * `--max-semi-space-size=32`: a young generation twice V8's default (docs/PERFORMANCE.md).
 * V8 reads it only at start: a launch flag, not a setting `createApp` applies.
 */
export const APP_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];

/**
 * The flags of `APP_NODE_FLAGS` this process was started without, by name: on the command
 * line (`execArgv`) or in NODE_OPTIONS, with any value (an operator may choose another size).
 */
export const missingNodeFlags = (
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): string[] => {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].map(flagName);
  return APP_NODE_FLAGS.filter((flag) => !given.includes(flagName(flag)));
};

/** `--max-semi-space-size=32` → `--max-semi-space-size` (V8 also takes `_` for `-`). */
const flagName = (flag: string): string => flag.split('=')[0].replace(/_/g, '-');
