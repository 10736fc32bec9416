import { EventStoreInUseError } from '../../../libs/eventstore/src/sqlite-event-store';
import { TokenService } from './platform/auth/token-service';
import { ConfigError, loadConfig } from './config/config';
import { createApp } from './app.factory';

const main = async (): Promise<void> => {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  const { app, jwtSecret, generatedSecret } = await createApp(config);
  await app.listen({ port: config.port, host: config.host });
  process.stdout.write(
    `control plane listening on http://${config.host}:${config.port} (data in ${config.dataDir})\n`,
  );
  if (generatedSecret) {
    // First start without AUTH_JWT_SECRET: hand the operator a way in, never an open API.
    const admin = await new TokenService(jwtSecret).sign({ sub: 'admin', roles: ['admin'] });
    process.stdout.write(
      `generated a JWT secret in ${config.dataDir}/jwt-secret; an admin token valid for 24 h:\n` +
        `${admin}\nmint others with: npm run token -- --sub NAME --role ROLE [--cluster ID]\n`,
    );
  }
};

main().catch((error: unknown) => {
  // A known refusal says what to do; anything else keeps its stack for the bug report.
  const said =
    error instanceof EventStoreInUseError
      ? error.message
      : error instanceof Error
        ? error.stack
        : String(error);
  process.stderr.write(`failed to start: ${said}\n`);
  process.exit(1);
});
