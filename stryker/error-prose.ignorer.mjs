// Stryker ignorer: the prose of refusals and internal errors. Clients parse an error's code and
// details (API.md), never its message, so a mutant that only rewords a message is not a
// behaviour; specs assert codes and details instead. See docs/TESTING.md.
import { PluginKind, declareClassPlugin } from '@stryker-mutator/api/plugin';

/** Calls whose argument at the index given is a message and nothing else. */
const MESSAGE_ARGUMENT = {
  // new DomainError(code, message, kind, details)
  DomainError: [1],
  // node.decider's refuse(code, message, details), pool.decider's conflict(code, message, details)
  refuse: [1],
  conflict: [1],
  // libs/kernel/src/errors.ts: notFound(what, id), invalidTransition(what, from, command),
  // forbidden(message): `what`, `command` and `message` word the message; clients read the code,
  // notFound's `id` and invalid_transition's `from` (API.md), which stay mutated.
  notFound: [0],
  invalidTransition: [0, 2],
  forbidden: [0],
  // assertNever(value, what): unreachable once the type checker accepts the switch.
  assertNever: [1],
};
/** Thrown for a broken invariant, never for a client: every argument is prose. */
const INVARIANT_ERRORS = new Set(['Error', 'RangeError', 'TypeError']);

const calleeName = (callee) => (callee.type === 'Identifier' ? callee.name : undefined);

class ErrorProseIgnorer {
  shouldIgnore(path) {
    const parent = path.parentPath;
    if (!parent || !(parent.isCallExpression() || parent.isNewExpression())) return undefined;
    const index = parent.node.arguments.indexOf(path.node);
    if (index < 0) return undefined;
    const name = calleeName(parent.node.callee);
    if (name === undefined) return undefined;
    if (parent.isNewExpression() && INVARIANT_ERRORS.has(name)) {
      return 'The message of an invariant error: no client reads it.';
    }
    if (MESSAGE_ARGUMENT[name]?.includes(index)) {
      return `The message argument of ${name}(): clients read the code and details, not the prose.`;
    }
    return undefined;
  }
}

export const strykerPlugins = [
  declareClassPlugin(PluginKind.Ignore, 'error-prose', ErrorProseIgnorer),
];
