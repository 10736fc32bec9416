import { asLogPosition } from '@fleet/eventstore/port';
import { AggregateCache, CachedState } from './aggregate-cache';

const at = (revision: number, state = `s${revision}`): CachedState<string> => ({
  state,
  revision,
  position: asLogPosition(revision * 10),
});

describe('AggregateCache', () => {
  it('keeps two aggregates folding one stream apart, and lets go of one without the other', () => {
    const cache = new AggregateCache(10);
    cache.set('cluster', 'cluster-1', at(3, 'lifecycle'));
    cache.set('clusterLiveness', 'cluster-1', at(3, 'liveness'));
    expect(cache.get('cluster', 'cluster-1')?.state).toBe('lifecycle');
    expect(cache.get('clusterLiveness', 'cluster-1')?.state).toBe('liveness');
    expect(cache.get('node', 'cluster-1')).toBeUndefined();
    expect(cache.size).toBe(2);
    cache.invalidate('clusterLiveness', 'cluster-1');
    expect(cache.get('clusterLiveness', 'cluster-1')).toBeUndefined();
    expect(cache.get('cluster', 'cluster-1')?.state).toBe('lifecycle');
    cache.invalidate('cluster', 'cluster-1');
    expect(cache.get('cluster', 'cluster-1')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('lets go of the first fold of a stream and keeps the one after it', () => {
    const cache = new AggregateCache(10);
    cache.set('a', 's', at(1, 'a'));
    cache.set('b', 's', at(1, 'b'));
    cache.set('c', 's', at(1, 'c'));
    cache.invalidate('c', 's'); // the newest, first in the stream's folds
    cache.invalidate('a', 's'); // the last
    expect(cache.get('b', 's')?.state).toBe('b');
    expect(cache.size).toBe(1);
    cache.invalidate('x', 's'); // not there: nothing changes
    expect(cache.size).toBe(1);
  });

  it('replaces a fold in place: the newest entry is the one read', () => {
    const cache = new AggregateCache(10);
    cache.set('node', 'node-1', at(1));
    cache.set('node', 'node-1', at(2));
    expect(cache.get('node', 'node-1')).toEqual(at(2));
    expect(cache.size).toBe(1);
  });

  it('is bounded: past its capacity the least recently used stream goes, all its folds with it', () => {
    const cache = new AggregateCache(4);
    cache.set('cluster', 'cluster-1', at(1));
    cache.set('clusterLiveness', 'cluster-1', at(1));
    cache.set('node', 'node-1', at(1));
    cache.set('node', 'node-2', at(1));
    // Over half full: a hit makes cluster-1 the most recently used.
    expect(cache.get('cluster', 'cluster-1')).toBeDefined();
    cache.set('node', 'node-3', at(1));
    expect(cache.get('node', 'node-1')).toBeUndefined();
    expect(cache.size).toBe(4);
    // The oldest now is node-2; then cluster-1 (two folds) goes whole.
    cache.set('node', 'node-4', at(1));
    expect(cache.get('node', 'node-2')).toBeUndefined();
    cache.set('node', 'node-5', at(1));
    expect(cache.get('cluster', 'cluster-1')).toBeUndefined();
    expect(cache.get('clusterLiveness', 'cluster-1')).toBeUndefined();
    expect(cache.size).toBe(3);
    expect(['node-3', 'node-4', 'node-5'].map((s) => cache.get('node', s)?.revision)).toEqual([
      1, 1, 1,
    ]);
  });
});
