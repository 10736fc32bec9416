import { Injectable } from '@nestjs/common';
import { EventCodec, Message } from '@fleet/kernel';

/** Every stored event type name the features know, so a bare name can filter all its versions. */
@Injectable()
export class EventTypes {
  private readonly stored = new Set<string>();

  register(codec: EventCodec<Message>): void {
    for (const type of codec.storedTypes()) this.stored.add(type);
  }

  /** `NodeCordoned` → every known `NodeCordoned.vN`; a versioned name stays as it is. */
  expand(names: readonly string[]): string[] {
    const out = new Set<string>();
    for (const name of names) {
      if (/\.v\d+$/.test(name)) {
        out.add(name);
        continue;
      }
      const known = [...this.stored].filter((t) => t.startsWith(`${name}.v`));
      if (known.length) known.forEach((t) => out.add(t));
      else out.add(`${name}.v1`);
    }
    return [...out];
  }
}
