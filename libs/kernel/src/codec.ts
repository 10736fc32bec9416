import { Message } from './messages';

/** Reads an old stored version of an event as the current one. */
export type Upcaster = (data: unknown) => Message;

/**
 * Maps events to versioned stored type names (`NodeCordoned.v1`) and back. Old versions are
 * read through an explicit upcaster map; types it does not know decode to null (not ours).
 */
export class EventCodec<E extends Message> {
  private readonly byStored = new Map<string, (data: unknown) => E>();

  constructor(
    private readonly versions: { readonly [K in E['type']]: number },
    upcasters: Readonly<Record<string, Upcaster>> = {},
  ) {
    for (const [type, version] of Object.entries(versions) as [string, number][]) {
      this.byStored.set(`${type}.v${version}`, (data) => ({ type, data }) as unknown as E);
    }
    for (const [stored, up] of Object.entries(upcasters)) {
      this.byStored.set(stored, (data) => up(data) as E);
    }
  }

  storedType(event: E): string {
    const version = (this.versions as Record<string, number>)[event.type];
    if (version === undefined) throw new Error(`event type ${event.type} has no stored version`);
    return `${event.type}.v${version}`;
  }

  decode(storedType: string, data: unknown): E | null {
    const read = this.byStored.get(storedType);
    return read ? read(data) : null;
  }

  /** Every stored type name this codec reads (current and upcast). */
  storedTypes(): string[] {
    return [...this.byStored.keys()];
  }
}
