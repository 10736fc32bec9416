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
};

export type EventMetadata = {
  readonly correlationId: string;
  readonly causationId: string;
  readonly actor: Actor;
  readonly occurredAt: string;
  readonly schemaVersion: number;
  readonly commandId?: string;
};
