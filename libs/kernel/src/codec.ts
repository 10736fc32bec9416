import { Message } from './messages';

/**
 * Reads an event stored under an old name or version: the type it reads as now (`to`) and its
 * data in the current shape (`up`; unchanged when absent, as for a rename).
 */
export type Upcaster<E extends Message = Message> = {
  readonly to: E['type'];
  readonly up?: (data: unknown) => unknown;
};

/**
 * Maps events to versioned stored type names (`NodeCordoned.v1`) and back. Old versions are
 * read through an explicit upcaster map; types it does not know decode to null (not ours).
 */
export class EventCodec<E extends Message> {
  private readonly byStored = new Map<string, (data: unknown) => E>();
  private readonly typeOf = new Map<string, E['type']>();

  constructor(
    private readonly versions: { readonly [K in E['type']]: number },
    upcasters: Readonly<Record<string, Upcaster<E>>> = {},
  ) {
    for (const [type, version] of Object.entries(versions) as [E['type'], number][]) {
      this.byStored.set(`${type}.v${version}`, (data) => ({ type, data }) as unknown as E);
      this.typeOf.set(`${type}.v${version}`, type);
    }
    for (const [stored, { to, up }] of Object.entries(upcasters)) {
      this.byStored.set(stored, (data) => ({ type: to, data: up ? up(data) : data }) as E);
      this.typeOf.set(stored, to);
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

  /** The stored type names that read as `type`: its current version and any upcast to it. */
  storedTypesOf(type: E['type']): string[] {
    return [...this.typeOf].filter(([, to]) => to === type).map(([stored]) => stored);
  }
}
