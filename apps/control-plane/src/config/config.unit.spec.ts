import { ConfigError, DEFAULT_RATE_CARD, loadConfig } from './config';

const refuses = (env: Record<string, string>, setting: string) => {
  expect(() => loadConfig(env)).toThrow(ConfigError);
  try {
    loadConfig(env);
  } catch (error) {
    expect((error as ConfigError).setting).toBe(setting);
    expect((error as Error).message).toContain(setting);
  }
};

describe('configuration', () => {
  it('starts on embedded defaults with nothing set', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.nodeStaleSec).toBe(300);
    expect(config.eventstoreUrl).toBeUndefined();
    expect(config.mongoUrl).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
    expect(config.rateCard).toEqual(DEFAULT_RATE_CARD);
    expect(config.dataDir.endsWith('data')).toBe(true);
    expect(config.leaderLeaseSec).toBe(10);
  });

  it('reads LEADER_LEASE_SEC', () => {
    expect(loadConfig({ LEADER_LEASE_SEC: '3' }).leaderLeaseSec).toBe(3);
  });

  it('reads every setting of the contract', () => {
    const config = loadConfig({
      PORT: '8080',
      DATA_DIR: '/tmp/x',
      NODE_STALE_SEC: '2',
      EVENTSTORE_URL: 'esdb://localhost:2113?tls=false',
      MONGO_URL: 'mongodb://localhost:27017/?replicaSet=rs0',
      REDIS_URL: 'redis://127.0.0.1:6379',
      AUTH_JWT_SECRET: 's'.repeat(40),
      RATE_CARD:
        '{"currency":"USD","gpuPerHour":{"L40S":1,"HPC_GPU":2,"MIG_1g":3,"MIG_2g":4,"MIG_3g":5},"cpuPerVcpuHour":6}',
      NOTIFY_WEBHOOK_URL: 'http://127.0.0.1:9999/hook',
      PROVISIONER_URL: 'http://127.0.0.1:9998',
    });
    expect(config).toMatchObject({
      port: 8080,
      dataDir: '/tmp/x',
      nodeStaleSec: 2,
      redisUrl: 'redis://127.0.0.1:6379',
      rateCard: { currency: 'USD', cpuPerVcpuHour: 6 },
    });
  });

  it('refuses credentials in an HTTP URL without repeating them, and keeps them in a store URL', () => {
    expect(() => loadConfig({ NOTIFY_WEBHOOK_URL: 'http://hook:S3cret@127.0.0.1:9/h' })).toThrow(
      /NOTIFY_WEBHOOK_URL.*credentials/,
    );
    try {
      loadConfig({ NOTIFY_WEBHOOK_URL: 'http://hook:S3cret@127.0.0.1:9/h' });
    } catch (error) {
      expect((error as Error).message).not.toContain('S3cret');
    }
    expect(loadConfig({ REDIS_URL: 'redis://:pw@127.0.0.1:6379' }).redisUrl).toBe(
      'redis://:pw@127.0.0.1:6379',
    );
  });

  describe('EVENTSTORE_URL', () => {
    it.each([
      'esdb://localhost:2113?tls=false',
      'esdb+discover://admin:changeit@cluster.example:2113',
      'kurrentdb://localhost:2113?tls=false',
      'kurrentdb+discover://cluster.example:2113?nodePreference=leader',
      // A cluster's hosts, which no WHATWG URL parser takes.
      'kurrentdb://db-1:2113,db-2:2113,db-3:2113?tls=false',
      'postgres://postgres@127.0.0.1:5432/fleet',
      'postgresql://fleet:secret@db.example:5432/fleet?sslmode=verify-full',
    ])('takes %s as it is', (url) => {
      expect(loadConfig({ EVENTSTORE_URL: url }).eventstoreUrl).toBe(url);
    });

    it.each([
      ['nope', /expected a URL starting esdb:\/\/, .*kurrentdb\+discover:\/\//],
      ['http://localhost:2113', /expected a URL starting/],
      ['mongodb://localhost:27017', /expected a URL starting/],
      ['KurrentDB://localhost:2113', /expected a URL starting/],
      ['kurrentdb://localhost:2113?tls=banana', /client cannot use it: .*true or false/],
      ['kurrentdb://localhost:port', /client cannot use it: .*port number/],
      ['kurrentdb://localhost:2113?nodePreference=sideways', /client cannot use it/],
      ['kurrentdb://localhost:2113?defaultDeadline=0', /client cannot use it: .*defaultDeadline/],
      ['kurrentdb://localhost:2113?tlsCAFile=/does/not/exist.pem', /client cannot use it: .*file/],
      ['postgres://', /names no host/],
      ['postgres://db.example:5432/fleet?sslrootcert=/does/not/exist.pem', /node-postgres cannot/],
      ['PostgreSQL://localhost/fleet', /expected a URL starting .*postgres:\/\/, postgresql:\/\//],
    ])('refuses %s naming the setting (exit 78), not with a stack trace', (url, problem) => {
      refuses({ EVENTSTORE_URL: url }, 'EVENTSTORE_URL');
      expect(() => loadConfig({ EVENTSTORE_URL: url })).toThrow(problem);
    });

    it('does not repeat a password the client quotes back', () => {
      const url = 'kurrentdb://admin:S3cret@localhost:2113?tls=S3cret';
      expect(() => loadConfig({ EVENTSTORE_URL: url })).toThrow(ConfigError);
      try {
        loadConfig({ EVENTSTORE_URL: url });
      } catch (error) {
        expect((error as Error).message).not.toContain('S3cret');
      }
    });

    it('does not repeat a PostgreSQL password in its refusal', () => {
      const url = 'postgres://fleet:S3cret@db.example:5432/fleet?sslkey=/nope/S3cret.key';
      expect(() => loadConfig({ EVENTSTORE_URL: url })).toThrow(/node-postgres cannot use it/);
      try {
        loadConfig({ EVENTSTORE_URL: url });
      } catch (error) {
        expect((error as Error).message).not.toContain('S3cret');
      }
    });

    it('reads an esdb URL without the client warning about the old name outside the log', () => {
      const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
      try {
        loadConfig({ EVENTSTORE_URL: 'esdb://localhost:2113?tls=false' });
        expect(warn).not.toHaveBeenCalled();
      } finally {
        warn.mockRestore();
      }
    });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ NODE_STALE_SEC: '0' }, 'NODE_STALE_SEC'],
    [{ NODE_STALE_SEC: '1.5' }, 'NODE_STALE_SEC'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ MONGO_URL: 'http://x' }, 'MONGO_URL'],
    [{ EVENTSTORE_URL: 'nope' }, 'EVENTSTORE_URL'],
    [{ NOTIFY_WEBHOOK_URL: 'ftp://x' }, 'NOTIFY_WEBHOOK_URL'],
    [{ NOTIFY_WEBHOOK_URL: 'http://hook:S3cret@127.0.0.1:9/h' }, 'NOTIFY_WEBHOOK_URL'],
    [{ PROVISIONER_URL: 'https://only-user@prov.example/' }, 'PROVISIONER_URL'],
    [{ RATE_CARD: '{"currency":"KRW"' }, 'RATE_CARD'],
    [{ RATE_CARD: '/does/not/exist.json' }, 'RATE_CARD'],
    [{ RATE_CARD: '{"currency":"KRW","gpuPerHour":{"L40S":1.5},"cpuPerVcpuHour":1}' }, 'RATE_CARD'],
    [{ RATE_CARD: '{"currency":"KRW","gpuPerHour":{"H100":1},"cpuPerVcpuHour":1}' }, 'RATE_CARD'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ MASS_FAILURE_RATIO: '1.5' }, 'MASS_FAILURE_RATIO'],
    [{ AUTH_JWT_SECRET: 'x'.repeat(31) }, 'AUTH_JWT_SECRET'],
    [{ DATA_DIR: __filename }, 'DATA_DIR'],
    [{ START_TIMEOUT_SEC: '0' }, 'START_TIMEOUT_SEC'],
    [{ LEADER_LEASE_SEC: '0' }, 'LEADER_LEASE_SEC'],
    [{ LEADER_LEASE_SEC: '2.5' }, 'LEADER_LEASE_SEC'],
    [{ LEADER_LEASE_SEC: 'ten' }, 'LEADER_LEASE_SEC'],
    [{ LEADER_LEASE_SEC: '3601' }, 'LEADER_LEASE_SEC'],
    [{ RATE_CARD: JSON.stringify({ ...DEFAULT_RATE_CARD, cpuPerVcpuHour: 2 ** 53 }) }, 'RATE_CARD'],
    [{ RATE_CARD: JSON.stringify({ ...DEFAULT_RATE_CARD, extra: 1 }) }, 'RATE_CARD'],
  ])('refuses %j naming %s', (env, setting) => refuses(env as Record<string, string>, setting));
});

describe('BACKUP_BUCKET', () => {
  it('defaults to s3://fleet-backups and keeps a given bucket and path without a trailing /', () => {
    expect(loadConfig({}).backupBucket).toBe('s3://fleet-backups');
    expect(loadConfig({ BACKUP_BUCKET: 'gs://tenant-backups/prod/' }).backupBucket).toBe(
      'gs://tenant-backups/prod',
    );
  });

  it.each(['fleet-backups', 's3://', 's3://Bad_Bucket', 's3://key:secret@bucket', 's3://b/p?x=1'])(
    'refuses %s naming the setting',
    (value) => refuses({ BACKUP_BUCKET: value }, 'BACKUP_BUCKET'),
  );
});
