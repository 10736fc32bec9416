/**
 * Node's command line for the control plane, wherever it is launched (`npm start`, the
 * Dockerfile, the bench's app servers; a unit test holds the first two to this list).
 *
 * `--max-semi-space-size=32`: V8's young generation, where a request's short-lived objects
 * live and die, may grow to 64 MiB instead of 32. An unchanged report leaves ~29 KB of
 * garbage, so at the default a scavenge runs every ~550 requests; with twice the room, half
 * as often for the same survivors. Measured on the single-node report over the 100,000-node
 * fleet (docs/PERFORMANCE.md, 2026-12-07): a paired A/B read 1.09x the rate and 0.92x the
 * CPU per request (64 MiB: 1.15x; a copy of the same build 1.00x), and the peak RSS at
 * 100,000 nodes rose from 795-811 to 855-872 MiB. V8 reads it only when the process starts
 * (set at run time it is ignored), so it is a launch flag, not a setting `createApp` applies.
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
