/** Injection tokens of the shared ports (interfaces have no runtime identity). */
export const CONFIG = Symbol('CONFIG');
export const EVENT_STORE = Symbol('EVENT_STORE');
export const READ_MODELS = Symbol('READ_MODELS');
export const DELAYED_JOBS = Symbol('DELAYED_JOBS');
export const CHECKPOINTS = Symbol('CHECKPOINTS');
/** The `Clock` process managers and adapters read (libs/kernel); tests put a manual one here. */
export const CLOCK = Symbol('CLOCK');
/** `'maintenance'` runs nothing in the background (the rebuild command); unset means serve. */
export const RUNTIME_MODE = Symbol('RUNTIME_MODE');
