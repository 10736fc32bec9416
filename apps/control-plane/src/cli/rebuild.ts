/**
 * Replays the whole event log into fresh read models: `npm run rebuild [-- --page-size N]`.
 * See USAGE for what that means with embedded read models and with MongoDB.
 */
import { randomBytes } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { AppModule } from '../app.module';
import { Config, ConfigError, loadConfig } from '../config/config';
import { PinoLoggerService } from '../platform/observability/logger';
import {
  RebuildResult,
  createMaintenanceContext,
  rebuildReadModels,
} from '../platform/runtime/rebuild';

/**
 * Configuration for a maintenance command, quieter by default than the server: null (with the
 * message that names the setting on stderr) when it is invalid.
 */
export const loadMaintenanceConfig = (env: NodeJS.ProcessEnv): Config | null => {
  try {
    return loadConfig({ ...env, LOG_LEVEL: env.LOG_LEVEL?.trim() || 'warn' });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return null;
  }
};

const USAGE = `usage: npm run rebuild [-- --page-size N]

Drops every read model and replays the whole event log through every projection, page by
page (default 2000 events), committing each projection's checkpoint with its writes. It reads
the same settings as the server (DATA_DIR, EVENTSTORE_URL, MONGO_URL, ...), never listens and
starts no reactors or jobs. Logs go to stdout at LOG_LEVEL (default here: warn); the last line
is a one-line summary.

  MONGO_URL set     rewrites the MongoDB read models (reactor checkpoints are kept, so no
                    webhook is sent again). Stop every serving replica first: the rebuild
                    drops the collections they read and write.
  MONGO_URL unset   the embedded read models live inside the serving process, which rebuilds
                    them from the log at every start, so here the rebuild is only a check:
                    that every event replays without error, and the documents per collection.

Exit codes: 0 done, 1 failed (the message names why), 2 bad arguments, 78 bad configuration.`;

export class UsageError extends Error {}

export type RebuildArgs = { help: boolean; pageSize?: number };

export function parseRebuildArgs(argv: readonly string[]): RebuildArgs {
  const args: RebuildArgs = { help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (flag === '--help' || flag === '-h') {
      args.help = true;
    } else if (flag === '--page-size') {
      const raw = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      const n = Number(raw);
      if (raw === undefined || !/^\d+$/.test(raw) || n < 1 || n > 100_000) {
        throw new UsageError(`--page-size must be a whole number from 1 to 100000`);
      }
      args.pageSize = n;
    } else {
      throw new UsageError(`unknown argument ${arg}`);
    }
  }
  return args;
}

/** The app as a maintenance context: configured stores, registered projections, nothing running. */
export const openRebuildContext = async (config: Config): Promise<INestApplicationContext> => {
  // No token is ever checked here; a throwaway secret keeps the rebuild from writing one to DATA_DIR.
  const secret = config.authJwtSecret ?? randomBytes(32).toString('hex');
  const context = await createMaintenanceContext(AppModule.forRoot(config, secret), {
    bufferLogs: true,
  });
  context.useLogger(context.get(PinoLoggerService));
  return context;
};

export const summary = (config: Config, r: RebuildResult): string => {
  const where = config.mongoUrl
    ? 'rebuilt the MongoDB read models'
    : 'checked the embedded read models (the server rebuilds them at every start)';
  const docs = Object.entries(r.collections)
    .map(([name, n]) => `${name}=${n}`)
    .join(' ');
  return (
    `${where}: replayed ${r.events} events (to position ${r.position}) in ${r.pages} pages ` +
    `through ${r.projections.join(', ') || 'no projections'} in ${r.durationMs} ms; ` +
    `documents: ${docs || 'none'}`
  );
};

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let args: RebuildArgs;
  try {
    args = parseRebuildArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const config = loadMaintenanceConfig(env);
  if (!config) return 78; // EX_CONFIG, as the server
  const context = await openRebuildContext(config);
  try {
    const result = await rebuildReadModels(context, { pageSize: args.pageSize });
    process.stdout.write(`${summary(config, result)}\n`);
  } finally {
    await context.close();
  }
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2), process.env).then(
    // Exit explicitly: a client library left holding a socket must not keep the command alive.
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(
        `rebuild failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
