import { Logger } from '@nestjs/common';
import { openDataDirWarning } from './platform/runtime/data-dir';
import { TokenService } from './platform/auth/token-service';
import { loadConfig } from './config/config';
import { missingNodeFlags } from './config/node-flags';
import { createApp } from './app.factory';
import { EXIT, StoreUrls, exitOnUnhandled, failStart } from './platform/runtime/failures';
import { neededStores, waitForStores } from './platform/runtime/wait-for-stores';

/**
 * A shutdown that cannot finish within this (a store out of reach holding a client's close:
 * with Redis gone, SIGTERM left the process up for good) exits non-zero instead: what was
 * recorded is in the log, and the next start re-arms every job from state. Below
 * Kubernetes' default grace period (30 s), so the process says why it stopped.
 */
export const SHUTDOWN_DEADLINE_MS = 10_000;

// Through the app's logger once it runs, so every line is one JSON object. Only what comes
// before the logger (a bad setting, a failed start) and the first start's admin token, which
// is for the person at the terminal and must never be in the log, are plain text.
const log = new Logger('main');

const exitIfShutdownHangs = (): void => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      setTimeout(() => {
        log.fatal(
          `shutdown did not finish within ${SHUTDOWN_DEADLINE_MS} ms (a store out of reach?); exiting`,
        );
        process.exit(EXIT.storeFailed);
      }, SHUTDOWN_DEADLINE_MS).unref();
    });
  }
};

// The stores' URLs once the configuration is read: failures name the store they came from.
let urls: StoreUrls = {};

const main = async (): Promise<void> => {
  exitOnUnhandled(() => urls);
  const config = loadConfig(process.env);
  urls = config;
  await waitForStores(neededStores(config), {
    deadlineMs: config.startTimeoutSec * 1000,
    say: (line) => process.stderr.write(`${line}\n`),
  });
  // A store that answered above and went away before the app was up must not hold the start
  // for good either.
  const stuck = setTimeout(() => {
    process.stderr.write(
      `failed to start: not up within ${config.startTimeoutSec} s (START_TIMEOUT_SEC); a store out of reach?\n`,
    );
    process.exit(EXIT.storeFailed);
  }, config.startTimeoutSec * 1000);
  stuck.unref();
  const { app, jwtSecret, generatedSecret } = await createApp(config);
  await app.listen({ port: config.port, host: config.host });
  clearTimeout(stuck);
  exitIfShutdownHangs();
  // Before the listening line, so whoever waits for that line has seen this one too.
  const missing = missingNodeFlags(process.execArgv, process.env.NODE_OPTIONS);
  if (missing.length > 0) {
    // Launched without `npm start` or the image's command: it runs, with more time in GC.
    log.warn(
      { missing },
      `started without node's ${missing.join(' ')} (see config/node-flags.ts): reports cost more CPU`,
    );
  }
  log.log(
    { url: `http://${config.host}:${config.port}`, dataDir: config.dataDir },
    'control plane listening',
  );
  const open = openDataDirWarning(config.dataDir);
  if (open) log.warn(open);
  if (generatedSecret) {
    // First start without AUTH_JWT_SECRET: hand the operator a way in, never an open API.
    const admin = await new TokenService(jwtSecret).sign({ sub: 'admin', roles: ['admin'] });
    process.stdout.write(
      `generated a JWT secret in ${config.dataDir}/jwt-secret; an admin token valid for 24 h:\n` +
        `${admin}\nmint others with: npm run token -- --sub NAME --role ROLE [--cluster ID]\n`,
    );
  }
};

// Exit codes (README): 78 a setting, 1 a store, 70 anything else (with its stack).
main().catch((error: unknown) => failStart(error, urls));
