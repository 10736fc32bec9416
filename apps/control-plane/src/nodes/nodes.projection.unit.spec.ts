import { NodeEvent } from './node.events';
import { NodeDoc, projectNode } from './nodes.projection';

const at = '2026-12-03T08:00:00.000Z';
const registered: NodeEvent = {
  type: 'NodeRegistered',
  data: {
    nodeId: 'n1',
    clusterId: 'c1',
    hostname: 'gpu-01',
    role: 'gpu',
    labels: { 'fleet/mode': 'shared' },
    mode: 'shared',
    capacity: { cpu: 64, memoryGiB: 512, diskGiB: 2000 },
    gpus: ['a', 'b', 'c'].map((u) => ({ uuid: `GPU-${u}`, model: 'L40S', memoryGiB: 48 })),
    kubeletReady: true,
    unschedulable: false,
    observedAt: at,
    registeredAt: at,
  },
};
const allocate = (sessionId: string, gpus: string[]): NodeEvent => ({
  type: 'NodeCapacityAllocated',
  data: { nodeId: 'n1', sessionId, owner: 'alice', gpus, cpu: 8, memoryGiB: 64, at },
});

/** Given events from registration on, the document after each. */
const given = (...events: NodeEvent[]): NodeDoc[] => {
  const docs: NodeDoc[] = [];
  let doc: NodeDoc | null = null;
  events.forEach((e, revision) => {
    doc = projectNode(doc, e, revision);
    docs.push(doc!);
  });
  return docs;
};

describe('the Nodes screen projection', () => {
  it('keeps the provisioner that made a node, from its label, as its labels change', () => {
    const labelled = (labels: Record<string, string>): NodeEvent => ({
      type: 'NodeInventoryChanged',
      data: { nodeId: 'n1', labels, observedAt: at, at },
    });
    const docs = given(
      registered,
      labelled({ 'fleet/provisioner': 'simulated', 'fleet/pool': 'p1' }),
      labelled({ 'fleet/pool': 'p1' }),
    );
    expect(docs.map((d) => d.provisioner)).toEqual([null, 'simulated', null]);
    const [made] = given({
      ...registered,
      data: { ...registered.data, labels: { 'fleet/provisioner': 'simulated' } },
    });
    expect(made.provisioner).toBe('simulated');
  });

  it('marks a node cordon-synced only while Kubernetes last said what is desired', () => {
    const observed = (unschedulable: boolean): NodeEvent => ({
      type: 'NodeUnschedulableObserved',
      data: { nodeId: 'n1', unschedulable, observedAt: at, at },
    });
    const docs = given(
      registered,
      { type: 'NodeCordoned', data: { nodeId: 'n1', reason: null, at } },
      observed(true),
      { type: 'NodeUncordoned', data: { nodeId: 'n1', at } },
      observed(false),
    );
    expect(docs.map((d) => d.cordonSynced)).toEqual([true, false, true, false, true]);
    // A node whose operator never said: not synced, whatever is desired.
    const [silent] = given({ ...registered, data: { ...registered.data, unschedulable: null } });
    expect(silent.cordonSynced).toBe(false);
  });

  it('shows a registered node ready with every card free', () => {
    const [doc] = given(registered);
    expect(doc).toMatchObject({ status: 'ready', gpuCount: 3, freeCards: 3, gpuModel: 'L40S' });
    expect(doc.gpus.map((g) => g.sessionId)).toEqual([null, null, null]);
  });

  it('shows the session holding each card, and busy while any is held', () => {
    const [, held, released] = given(registered, allocate('s1', ['GPU-b']), {
      type: 'NodeCapacityReleased',
      data: { nodeId: 'n1', sessionId: 's1', at },
    });
    expect(held).toMatchObject({ status: 'busy', freeCards: 2, runningSessions: 1, freeCpu: 56 });
    expect(held.gpus[1]).toMatchObject({ uuid: 'GPU-b', sessionId: 's1', owner: 'alice' });
    expect(released).toMatchObject({ status: 'ready', freeCards: 3, runningSessions: 0 });
    expect(released.gpus[1]).toMatchObject({ sessionId: null, owner: null });
  });

  it('keeps a card its node stopped listing aside while a session holds it, until the session ends', () => {
    const gpusChanged = (added: string[], removed: string[]): NodeEvent => ({
      type: 'NodeGpusChanged',
      data: {
        nodeId: 'n1',
        added: added.map((uuid) => ({ uuid, model: 'L40S', memoryGiB: 48 })),
        removed,
        observedAt: at,
        at,
      },
    });
    const released: NodeEvent = {
      type: 'NodeCapacityReleased',
      data: { nodeId: 'n1', sessionId: 's1', at },
    };
    const [, , dropped, , gone] = given(
      registered,
      allocate('s1', ['GPU-b']),
      gpusChanged([], ['GPU-a', 'GPU-b']),
      gpusChanged([], []),
      released,
    );
    // GPU-a was free: gone. GPU-b is held: kept aside with its session, not counted.
    expect(dropped).toMatchObject({ gpuCount: 1, freeCards: 1, status: 'busy' });
    expect(dropped.unlisted).toEqual([
      { uuid: 'GPU-b', model: 'L40S', memoryGiB: 48, sessionId: 's1', owner: 'alice' },
    ]);
    expect(gone.unlisted).toEqual([]);
    expect(gone.gpuCount).toBe(1);
    // Listed again while still held: the node's card again, once.
    const [, , , back] = given(
      registered,
      allocate('s1', ['GPU-b']),
      gpusChanged([], ['GPU-b']),
      gpusChanged(['GPU-b'], []),
    );
    expect(back.unlisted).toEqual([]);
    expect(back.gpus.map((g) => [g.uuid, g.sessionId])).toEqual([
      ['GPU-a', null],
      ['GPU-c', null],
      ['GPU-b', 's1'],
    ]);
  });

  it('shows a held card whose model or memory changed once, as reported, still held', () => {
    const [, , changed] = given(registered, allocate('s1', ['GPU-b']), {
      type: 'NodeGpusChanged',
      data: {
        nodeId: 'n1',
        added: [{ uuid: 'GPU-b', model: 'L40S', memoryGiB: 40 }],
        removed: ['GPU-b'],
        observedAt: at,
        at,
      },
    });
    expect(changed.unlisted ?? []).toEqual([]);
    expect(changed.gpus.filter((g) => g.uuid === 'GPU-b')).toEqual([
      { uuid: 'GPU-b', model: 'L40S', memoryGiB: 40, sessionId: 's1', owner: 'alice' },
    ]);
    expect(changed).toMatchObject({ gpuCount: 3, freeCards: 2, status: 'busy' });
  });

  it('keeps the cards an event did not touch as the same objects (the store then shares them)', () => {
    const [before, after, cordoned] = given(registered, allocate('s1', ['GPU-b']), {
      type: 'NodeCordoned',
      data: { nodeId: 'n1', reason: 'maintenance', at },
    });
    expect(after.gpus).not.toBe(before.gpus);
    expect(after.gpus[0]).toBe(before.gpus[0]);
    expect(after.gpus[1]).not.toBe(before.gpus[1]);
    expect(after.gpus[2]).toBe(before.gpus[2]);
    // No card changed: the very same list.
    expect(cordoned.gpus).toBe(after.gpus);
    expect(cordoned.status).toBe('cordoned');
  });

  it('ranks offline above cordoned above busy', () => {
    const [, , cordoned, offline] = given(
      registered,
      allocate('s1', ['GPU-a']),
      { type: 'NodeCordoned', data: { nodeId: 'n1', reason: null, at } },
      {
        type: 'NodeWentOffline',
        data: {
          nodeId: 'n1',
          clusterId: 'c1',
          hostname: 'gpu-01',
          reason: 'heartbeat_timeout',
          from: 'cordoned',
          lastSeenAt: at,
          at,
        },
      },
    );
    expect(cordoned.status).toBe('cordoned');
    expect(offline).toMatchObject({ status: 'offline', offlineReason: 'heartbeat_timeout' });
  });

  it('keeps the removal a pool operation asked for (the mass-failure guard leaves the node out)', () => {
    const until = '2026-12-03T08:10:00.000Z';
    const [before, cordoned, marked] = given(
      registered,
      { type: 'NodeCordoned', data: { nodeId: 'n1', reason: 'drain d1', at } },
      { type: 'NodeRemovalRequested', data: { nodeId: 'n1', operationId: 'op1', until, at } },
    );
    expect(before.removal).toBeUndefined();
    expect(marked.removal).toEqual({ operationId: 'op1', until });
    expect(marked.status).toBe(cordoned.status);
  });
});
