// Jest global teardown: removes the data directories and the Redis keys this run's apps made
// (recorded by test-run.ts), and nothing else: another run on the same machine keeps its own.
const fs = require('node:fs');
const path = require('node:path');
const Redis = require('ioredis');

const dropPrefixes = async (prefixes) => {
  if (prefixes.length === 0) return;
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
  });
  try {
    await redis.connect();
    for (const prefix of prefixes) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length > 0) await redis.unlink(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
  } catch (error) {
    process.stderr.write(`test teardown: Redis keys of this run left in place: ${error}\n`);
  } finally {
    redis.disconnect();
  }
};

module.exports = async () => {
  const file = process.env.FLEET_TEST_RUN;
  if (!file || !fs.existsSync(file)) return;
  const dirs = [];
  const prefixes = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const at = line.indexOf(' ');
    if (at <= 0) continue;
    const [kind, value] = [line.slice(0, at), line.slice(at + 1)];
    if (kind === 'dir') dirs.push(value);
    else if (kind === 'redis') prefixes.push(value);
  }
  for (const dir of new Set(dirs)) fs.rmSync(dir, { recursive: true, force: true });
  await dropPrefixes([...new Set(prefixes)]);
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
};
