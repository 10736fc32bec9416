import { readFileSync } from 'node:fs';
import path from 'node:path';
import { APP_NODE_FLAGS, missingNodeFlags } from './node-flags';

const repo = path.join(__dirname, '../../../..');

describe('APP_NODE_FLAGS', () => {
  it('are on the command line of npm start', () => {
    const pkg = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8'));
    const start: string = pkg.scripts.start;
    const node = start.slice(start.indexOf('node '));
    const argv = node.split(/\s+/);
    // Each before the script, where node reads its own options, not after it (the app's argv).
    const script = argv.findIndex((a) => a.endsWith('main.js'));
    for (const flag of APP_NODE_FLAGS) {
      expect(argv).toContain(flag);
      expect(argv.indexOf(flag)).toBeLessThan(script);
    }
  });

  it("are on the command line of the Dockerfile's CMD", () => {
    const dockerfile = readFileSync(path.join(repo, 'Dockerfile'), 'utf8');
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
    expect(cmd).not.toBeNull();
    const argv: string[] = JSON.parse(cmd![1]);
    expect(argv[0]).toBe('node');
    expect(argv.slice(1, 1 + APP_NODE_FLAGS.length)).toEqual([...APP_NODE_FLAGS]);
  });
});

describe('missingNodeFlags', () => {
  it('names every flag when started without any', () => {
    expect(missingNodeFlags([], undefined)).toEqual([...APP_NODE_FLAGS]);
    expect(missingNodeFlags(['--enable-source-maps'], '')).toEqual([...APP_NODE_FLAGS]);
  });

  it('takes them from the command line or NODE_OPTIONS, with any value', () => {
    expect(missingNodeFlags([...APP_NODE_FLAGS], undefined)).toEqual([]);
    expect(missingNodeFlags([], ` ${APP_NODE_FLAGS.join(' ')} --trace-warnings`)).toEqual([]);
    expect(missingNodeFlags(['--max-semi-space-size=64'], undefined)).toEqual([]);
    expect(missingNodeFlags(['--max_semi_space_size=8'], undefined)).toEqual([]);
  });

  it('does not take a flag that only starts the same', () => {
    expect(missingNodeFlags(['--max-semi-space-size-other=1'], undefined)).toEqual([
      ...APP_NODE_FLAGS,
    ]);
  });
});
