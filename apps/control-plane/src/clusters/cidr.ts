/** IPv4 CIDR blocks: parsed strictly (no host bits set), compared as integer ranges. */
export type Cidr = { readonly base: number; readonly prefix: number };

const OCTET = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

export const parseCidr = (text: string): Cidr | null => {
  const match = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(text);
  if (!match) return null;
  const octets = match[1].split('.');
  if (!octets.every((o) => OCTET.test(o))) return null;
  const prefix = Number(match[2]);
  if (prefix > 32) return null;
  const base = octets.reduce((n, o) => n * 256 + Number(o), 0);
  const size = 2 ** (32 - prefix);
  if (base % size !== 0) return null; // host bits set: 10.0.0.1/16 is not a block
  return { base, prefix };
};

const range = (c: Cidr): [number, number] => [c.base, c.base + 2 ** (32 - c.prefix) - 1];

export const cidrsOverlap = (a: Cidr, b: Cidr): boolean => {
  const [a0, a1] = range(a);
  const [b0, b1] = range(b);
  return a0 <= b1 && b0 <= a1;
};
