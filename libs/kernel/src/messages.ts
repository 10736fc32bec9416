/**
 * Messages are plain discriminated unions, never classes: an event read back from
 * the store routes exactly like one just decided.
 */
export type Message<Type extends string = string, Data = unknown> = {
  readonly type: Type;
  readonly data: Data;
};

/** Who caused a change: a token subject and its roles, or the system itself. */
export type Actor = { readonly sub: string; readonly roles: readonly string[] };

export const SYSTEM_ACTOR: Actor = { sub: 'system', roles: ['system'] };

/** Carried by every command from the edge (controller, job, reactor) to the events it appends. */
export type CommandContext = {
  /** Unique per command; event ids derive from it, so a retried command appends nothing new. */
  readonly commandId: string;
  readonly correlationId: string;
  readonly causationId: string;
  readonly actor: Actor;
  /** The command's time, decided once at the edge: deciders never read a clock. */
  readonly now: Date;
  /** Issued by the leader's periodic work: the fencing epoch of its lease term (recorded). */
  readonly leaderEpoch?: number;
};

/** What a system command needs of the stored event that caused it. */
export type Cause = {
  readonly eventId: string;
  readonly metadata: { readonly correlationId: string };
};

export type SystemContextOptions = {
  /** The event this command reacts to: its correlation is joined and it is the cause. */
  readonly cause?: Cause;
  /** Without a cause: the chain this command belongs to (default: its own id). */
  readonly correlationId?: string;
  /** Without a cause: what caused it (default: its own id). */
  readonly causationId?: string;
  /** The command's time (default: now). */
  readonly now?: Date;
  /** The leader's lease term it is issued in (periodic work only). */
  readonly leaderEpoch?: number;
};

/**
 * The context of a command the system issues itself (a saga step, a timer, a reactor): the
 * system actor, and its correlation and causation taken from the event that caused it when
 * there is one, else as given, else the command's own id (a chain of its own).
 */
export const systemContext = (
  commandId: string,
  options: SystemContextOptions = {},
): CommandContext => {
  const { cause, now = new Date() } = options;
  const context: CommandContext = {
    commandId,
    correlationId: cause?.metadata.correlationId ?? options.correlationId ?? commandId,
    causationId: cause?.eventId ?? options.causationId ?? commandId,
    actor: SYSTEM_ACTOR,
    now,
  };
  return options.leaderEpoch === undefined
    ? context
    : { ...context, leaderEpoch: options.leaderEpoch };
};

export type EventMetadata = {
  readonly correlationId: string;
  readonly causationId: string;
  readonly actor: Actor;
  readonly occurredAt: string;
  readonly schemaVersion: number;
  readonly commandId?: string;
  /** Appended by the leader's periodic work in this lease term (see CommandContext). */
  readonly leaderEpoch?: number;
};
