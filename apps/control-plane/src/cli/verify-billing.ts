/**
 * Recomputes every session's bill from the event log and compares it with the stored billing
 * records: `npm run verify-billing`. See USAGE.
 */
import { EventStore } from '@fleet/eventstore/port';
import { ReadModelStore } from '@fleet/readmodels/port';
import {
  BillingAudit,
  BillingMismatch,
  auditBilling,
  BILLING_PROJECTION,
  billingProjection,
} from '../billing';
import { rebuildReadModels } from '../platform/runtime/rebuild';
import { EVENT_STORE, READ_MODELS } from '../platform/runtime/tokens';
import { loadMaintenanceConfig, openRebuildContext } from './rebuild';

const USAGE = `usage: npm run verify-billing

Reads every session stream (session-*) of the configured event log, recomputes its billing
lines from the events, and compares them with the stored billing records: count, from, to and
amount of every line, and the sums. Prints one line per mismatch and a summary; exits 0 when
every session verifies, 1 otherwise (78 on bad configuration, 2 on bad arguments). Reads the
same settings as the server; never listens, starts no projections, reactors or jobs.

  MONGO_URL set     compares with the records the serving app stored in MongoDB (read only).
                    Sessions with events the billing projection has not reached yet are
                    listed as behind and not compared.
  MONGO_URL unset   the embedded records live inside the serving process; here they are
                    rebuilt from the log by the billing projection first, so this checks
                    that projection against the independent recomputation.`;

const key = (k: { from: string; to: string; amount: number } | null): string =>
  k ? `${k.from}..${k.to} amount=${k.amount}` : '-';

const mismatchLine = (sessionId: string, m: BillingMismatch): string =>
  `mismatch session=${sessionId} line=${m.index} ${m.problem}` +
  ` record=${m.recordId ?? '-'} recorded=${key(m.recorded)} recomputed=${key(m.recomputed)}`;

/** The report as printed: one line per mismatch, then one summary line. */
export const reportLines = (audit: BillingAudit): string[] => {
  const lines: string[] = [];
  for (const v of audit.sessions) {
    if (v.ok) continue;
    for (const m of v.details) lines.push(mismatchLine(v.sessionId, m));
    if (!v.details.length) {
      lines.push(
        `mismatch session=${v.sessionId} totals recorded=${v.recorded} recomputed=${v.recomputed}`,
      );
    }
  }
  for (const r of audit.orphans) {
    lines.push(
      `mismatch session=${r.sessionId} orphan record=${r.recordId} ` +
        `recorded=${key(r)} (no such session in the log)`,
    );
  }
  for (const b of audit.behind) {
    lines.push(
      `behind session=${b.sessionId} (its last event ${b.lastPosition} not projected yet)`,
    );
  }
  const bad = audit.sessions.filter((v) => !v.ok).length;
  const recorded = audit.sessions.reduce((s, v) => s + v.recorded, 0);
  const recomputed = audit.sessions.reduce((s, v) => s + v.recomputed, 0);
  lines.push(
    `${audit.ok ? 'ok' : 'MISMATCH'}: ${audit.sessions.length} sessions verified, ` +
      `${audit.sessions.length - bad} ok, ${bad} mismatched, ${audit.orphans.length} orphan records, ` +
      `${audit.behind.length} behind; recorded ${recorded}, recomputed ${recomputed}`,
  );
  return lines;
};

/** Verifies against ready stores and prints; the exit code. */
export const verifyBilling = async (
  store: EventStore,
  readModels: ReadModelStore,
  write: (line: string) => void,
  readModelAt?: number,
): Promise<number> => {
  const audit = await auditBilling(store, readModels, readModelAt);
  for (const line of reportLines(audit)) write(line);
  return audit.ok ? 0 : 1;
};

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (argv.length) {
    process.stderr.write(`unknown argument ${argv[0]}\n${USAGE}\n`);
    return 2;
  }
  const config = loadMaintenanceConfig(env);
  if (!config) return 78; // EX_CONFIG, as the server
  // The rebuild's maintenance context: configured stores, nothing started in the background.
  const context = await openRebuildContext(config);
  try {
    const store = context.get<EventStore>(EVENT_STORE, { strict: false });
    const readModels = context.get<ReadModelStore>(READ_MODELS, { strict: false });
    let readModelAt: number | undefined;
    if (config.mongoUrl) {
      readModelAt = await readModels.checkpoint(BILLING_PROJECTION);
    } else {
      // Embedded read models are this process's own and empty: project billing into them.
      await rebuildReadModels({ eventStore: store, readModels, projections: [billingProjection] });
    }
    return await verifyBilling(
      store,
      readModels,
      (l) => process.stdout.write(`${l}\n`),
      readModelAt,
    );
  } finally {
    await context.close();
  }
}

if (require.main === module) {
  main(process.argv.slice(2), process.env).then(
    // Exit explicitly: a client library left holding a socket must not keep the command alive.
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(
        `verify-billing failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
