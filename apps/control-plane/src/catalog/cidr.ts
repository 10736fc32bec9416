/** IPv4 CIDR blocks: parsed strictly (no host bits set), compared as integer ranges. */
export type Cidr = { readonly base: number; readonly prefix: number };

/** What a CIDR field must be, in the words a client is told. */
export const CIDR_RULE = 'an IPv4 CIDR a.b.c.d/n (octets 0-255 without leading zeros, n 0-32)';

const OCTET = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

const dotted = (n: number): string =>
  [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');

/** The block, or the problem with the text: which part breaks the rule, not only the rule. */
export const checkCidr = (text: string): { cidr: Cidr } | { problem: string } => {
  const refuse = (why: string) => ({ problem: `must be ${CIDR_RULE}: ${why}` });
  const match = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(text);
  if (!match) return { problem: `must be ${CIDR_RULE}` };
  const octets = match[1].split('.');
  const bad = octets.find((o) => !OCTET.test(o));
  if (bad !== undefined) {
    return refuse(
      Number(bad) > 255 ? `octet ${bad} is above 255` : `octet ${bad} has a leading zero`,
    );
  }
  const prefix = Number(match[2]);
  if (prefix > 32) return refuse(`prefix /${match[2]} is above 32`);
  const base = octets.reduce((n, o) => n * 256 + Number(o), 0);
  const size = 2 ** (32 - prefix);
  // Host bits set: 10.0.0.1/16 is not a block; name the block it lies in.
  if (base % size !== 0) {
    return {
      problem: `must have no host bits set (${text} lies in ${dotted(base - (base % size))}/${prefix})`,
    };
  }
  return { cidr: { base, prefix } };
};

const range = (c: Cidr): [number, number] => [c.base, c.base + 2 ** (32 - c.prefix) - 1];

export const cidrsOverlap = (a: Cidr, b: Cidr): boolean => {
  const [a0, a1] = range(a);
  const [b0, b1] = range(b);
  return a0 <= b1 && b0 <= a1;
};
