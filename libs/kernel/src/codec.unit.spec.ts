import { EventCodec } from './codec';
import { Message } from './messages';

type Ev =
  | Message<'ThingRenamedLater', { id: string }>
  | Message<'ThingReshaped', { id: string; count: number }>;

const codec = new EventCodec<Ev>(
  { ThingRenamedLater: 1, ThingReshaped: 2 },
  {
    'ThingOldName.v1': { to: 'ThingRenamedLater' },
    'ThingReshaped.v1': { to: 'ThingReshaped', up: (d) => ({ ...(d as object), count: 0 }) },
  },
);

describe('EventCodec', () => {
  it('stores an event under its current name and version', () => {
    expect(codec.storedType({ type: 'ThingReshaped', data: { id: 'a', count: 1 } })).toBe(
      'ThingReshaped.v2',
    );
  });

  it('reads an event stored under an old name as the current type, data unchanged', () => {
    expect(codec.decode('ThingOldName.v1', { id: 'a' })).toEqual({
      type: 'ThingRenamedLater',
      data: { id: 'a' },
    });
  });

  it('reads an old version through its upcaster', () => {
    expect(codec.decode('ThingReshaped.v1', { id: 'a' })).toEqual({
      type: 'ThingReshaped',
      data: { id: 'a', count: 0 },
    });
  });

  it('reads nothing it does not know', () => {
    expect(codec.decode('ThingOldName.v2', { id: 'a' })).toBeNull();
    expect(codec.decode('Other.v1', {})).toBeNull();
  });

  it('lists every stored name, and those that read as one type', () => {
    expect(codec.storedTypes().sort()).toEqual([
      'ThingOldName.v1',
      'ThingRenamedLater.v1',
      'ThingReshaped.v1',
      'ThingReshaped.v2',
    ]);
    expect(codec.storedTypesOf('ThingRenamedLater').sort()).toEqual([
      'ThingOldName.v1',
      'ThingRenamedLater.v1',
    ]);
    expect(codec.storedTypesOf('ThingReshaped').sort()).toEqual([
      'ThingReshaped.v1',
      'ThingReshaped.v2',
    ]);
  });
});
