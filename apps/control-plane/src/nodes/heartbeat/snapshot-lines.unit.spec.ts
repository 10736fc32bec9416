import { lineRoom, writeLine, writeNumber } from './snapshot-lines';

const written = (n: number): string => {
  const buf = Buffer.alloc(64, 0x23);
  const end = writeNumber(buf, 3, n);
  expect(buf.subarray(0, 3).toString('latin1')).toBe('###'); // nothing before `at`
  expect(buf[end]).toBe(0x23); // nothing past the end it gives
  return buf.toString('latin1', 3, end);
};

describe('snapshot lines: writeNumber', () => {
  it('writes what String(n) writes, at every digit count of a safe integer', () => {
    const edges = [0, 1, 9, 10, 11, 99, 100, 101, 999_999, 1_000_000, Number.MAX_SAFE_INTEGER];
    for (let p = 1; p <= 15; p++) edges.push(10 ** p - 1, 10 ** p, 10 ** p + 1);
    for (const n of edges) expect(written(n)).toBe(String(n));
  });

  it('writes what String(n) writes for 20,000 random epoch-millisecond times', () => {
    const buf = Buffer.alloc(20_000 * 14);
    const times = Array.from({ length: 20_000 }, () =>
      Math.floor(Math.random() * 4_102_444_800_000),
    );
    let at = 0;
    for (const n of times) {
      at = writeNumber(buf, at, n);
      buf[at++] = 0x0a;
    }
    expect(buf.toString('latin1', 0, at)).toBe(times.map((n) => `${n}\n`).join(''));
  });

  it('leaves what is not a non-negative safe integer to String(n)', () => {
    for (const n of [-1, -1_000, 1.5, 2 ** 53, 1e21, -0.25, Number.MAX_VALUE, NaN, Infinity]) {
      expect(written(n)).toBe(String(n));
    }
  });
});

describe('snapshot lines: writeLine', () => {
  const line = (nodeId: string, seenAt: number, observedAt: number | null): string => {
    const buf = Buffer.alloc(lineRoom(nodeId.length));
    return buf.toString('utf8', 0, writeLine(buf, 0, nodeId, seenAt, observedAt));
  };

  it('writes `nodeId seenAt observedAt`, the last empty for none, one line each', () => {
    expect(line('d05d52f8-e283-5a5c-a7a3-7ee35b6fc349', 1_796_000_000_123, 1_795_999_999_000)).toBe(
      'd05d52f8-e283-5a5c-a7a3-7ee35b6fc349 1796000000123 1795999999000\n',
    );
    expect(line('a', 1_000, null)).toBe('a 1000 \n');
  });

  it('fits its room whatever the id holds (3 bytes a UTF-16 unit at most) and the numbers', () => {
    const ids = ['€€€', '😀😀', 'node-é', 'x'.repeat(200)];
    for (const id of ids) {
      const text = line(id, -Number.MAX_VALUE, -Number.MIN_VALUE);
      expect(text).toBe(`${id} ${-Number.MAX_VALUE} ${-Number.MIN_VALUE}\n`);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(lineRoom(id.length));
    }
  });

  it('appends at the position given, lines one after another', () => {
    const buf = Buffer.alloc(lineRoom(1) * 3);
    let at = 0;
    at = writeLine(buf, at, 'a', 1, 2);
    at = writeLine(buf, at, 'b', 3, null);
    expect(buf.toString('utf8', 0, at)).toBe('a 1 2\nb 3 \n');
  });
});
