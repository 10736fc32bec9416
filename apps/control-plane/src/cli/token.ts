/**
 * Prints a bearer token for the API:
 *   npm run token -- --sub NAME --role ROLE [--role ROLE2] [--cluster ID ...] [--ttl SECONDS]
 * Only the token goes to stdout, so `TOKEN=$(npm run -s token -- ...)` works.
 */
import { Role, ROLES, isRole } from '../platform/auth/caller';
import { resolveJwtSecret } from '../platform/auth/jwt-secret';
import { TokenService } from '../platform/auth/token-service';

export type TokenArgs = { sub: string; roles: Role[]; clusters: string[]; ttlSec?: number };

export class UsageError extends Error {}

const USAGE =
  'usage: npm run token -- --sub NAME --role ROLE [--role ROLE2] [--cluster ID ...] [--ttl SECONDS]';

export function parseTokenArgs(argv: string[]): TokenArgs {
  let sub: string | undefined;
  let ttlSec: number | undefined;
  const roles: Role[] = [];
  const clusters: string[] = [];

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    // Accept both `--flag value` and `--flag=value`.
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      const v = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (v === undefined || v === '' || (eq < 0 && v.startsWith('--'))) {
        throw new UsageError(`${flag} needs a value`);
      }
      return v;
    };
    switch (flag) {
      case '--sub':
        sub = value();
        break;
      case '--role': {
        const role = value();
        if (!isRole(role)) {
          throw new UsageError(`--role must be one of ${ROLES.join(', ')} (got "${role}")`);
        }
        if (!roles.includes(role)) roles.push(role);
        break;
      }
      case '--cluster':
        clusters.push(value());
        break;
      case '--ttl': {
        const raw = value();
        const n = Number(raw);
        if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n <= 0) {
          throw new UsageError(`--ttl must be a positive whole number of seconds (got "${raw}")`);
        }
        ttlSec = n;
        break;
      }
      default:
        throw new UsageError(`unknown argument ${arg}`);
    }
  }
  if (sub === undefined) throw new UsageError('--sub is required');
  if (roles.length === 0) throw new UsageError('--role is required (at least one)');
  return { sub, roles, clusters, ttlSec };
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let args: TokenArgs;
  try {
    args = parseTokenArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    return 2;
  }
  const { secret, generated, file } = resolveJwtSecret({
    configured: env.AUTH_JWT_SECRET,
    dataDir: env.DATA_DIR || './data',
  });
  // A freshly generated secret means no running server shares it yet; say so, off stdout.
  if (generated) process.stderr.write(`generated a new JWT secret in ${file}\n`);
  const token = await new TokenService(secret).sign(
    { sub: args.sub, roles: args.roles, clusters: args.clusters },
    args.ttlSec,
  );
  process.stdout.write(`${token}\n`);
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2), process.env).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
