import {
  again,
  at,
  chose,
  complete,
  done,
  drained,
  fail,
  given,
  node,
  requested,
  start,
  started,
  stepDue,
  succeed,
} from './testing/operation-workflow.fixtures';

describe('the pool operation steps', () => {
  describe('scale-in', () => {
    const shrink = requested('scale_node_pool', { fromSize: 3, desiredSize: 1 });
    const members = [
      { nodeId: 'a', hostname: 'h-a', runningSessions: 2, capacity: { cpu: 8, memoryGiB: 32 } },
      { nodeId: 'b', hostname: 'h-b', runningSessions: 0, capacity: { cpu: 8, memoryGiB: 32 } },
      { nodeId: 'c', hostname: 'h-c', runningSessions: 1, capacity: { cpu: 8, memoryGiB: 32 } },
    ];

    it('chooses the idlest nodes, as many as are too many', () => {
      given([shrink], { members })
        .when(stepDue)
        .then([
          start('choose_nodes'),
          {
            type: 'ChooseOperationNodes',
            data: {
              nodes: [
                { nodeId: 'b', hostname: 'h-b' },
                { nodeId: 'c', hostname: 'h-c' },
              ],
              at,
            },
          },
          complete('choose_nodes', 'h-b, h-c'),
          again(0),
        ]);
      expect(
        given([shrink, started('choose_nodes')], { members: [] })
          .when(stepDue)
          .thenOutputs(),
      ).toContainEqual(complete('choose_nodes', 'none'));
    });

    const chosen = [shrink, started('choose_nodes'), done('choose_nodes'), chose('b', 'c')];

    it('drains each chosen node once, and looks again while drains run', () => {
      const nodes = { b: node('online', 1), c: node('online') };
      given(chosen, { nodes })
        .when(stepDue)
        .then([
          start('drain_nodes'),
          { type: 'DrainNode', data: { nodeId: 'b' } },
          { type: 'DrainNode', data: { nodeId: 'c' } },
          again(250),
        ]);
      given([...chosen, started('drain_nodes'), drained('b')], {
        nodes,
        drains: { 'd-b': 'running' },
      })
        .when(stepDue)
        .then([{ type: 'DrainNode', data: { nodeId: 'c' } }, again(250)]);
    });

    it('needs no drain for a node gone, or offline and empty', () => {
      given([...chosen, started('drain_nodes')], { nodes: { b: node('gone'), c: node('offline') } })
        .when(stepDue)
        .then([complete('drain_nodes', '2 node(s) drained'), again(0)]);
    });

    it('completes the drains once every one completed', () => {
      const all = [...chosen, started('drain_nodes'), drained('b'), drained('c')];
      const nodes = { b: node('online'), c: node('online') };
      given(all, { nodes, drains: { 'd-b': 'completed' } })
        .when(stepDue)
        .then([again(250)]);
      given(all, { nodes, drains: { 'd-b': 'completed', 'd-c': 'completed' } })
        .when(stepDue)
        .then([complete('drain_nodes', '2 node(s) drained'), again(0)]);
    });

    it('fails naming a chosen node an admin moved to another pool, after draining those before it', () => {
      given([...chosen, started('drain_nodes')], {
        nodes: { b: node('online'), c: { ...node('online', 0, 'p2'), hostname: 'h-c' } },
      })
        .when(stepDue)
        .then([
          { type: 'DrainNode', data: { nodeId: 'b' } },
          fail('node_in_use: node h-c was moved to another pool since it was chosen: not drained'),
        ]);
    });

    const removing = [...chosen, started('drain_nodes'), done('drain_nodes')];

    it('asks for the removal once, then looks again at once', () => {
      const nodes = { b: node('online'), c: node('online') };
      given(removing, { nodes })
        .when(stepDue)
        .then([
          start('remove_nodes'),
          {
            type: 'RemoveNodes',
            data: {
              key: 'all',
              nodes: [
                { nodeId: 'b', hostname: 'h-b' },
                { nodeId: 'c', hostname: 'h-c' },
              ],
            },
          },
          again(0),
        ]);
    });

    it('deletes each node once offline and empty, waiting for the others', () => {
      const asked = new Set(['removal all']);
      const removal = [...removing, started('remove_nodes')];
      given(removal, { asked, nodes: { b: node('online'), c: node('offline', 1) } })
        .when(stepDue)
        .then([again(250)]);
      given(removal, { asked, nodes: { b: node('offline'), c: node('online') } })
        .when(stepDue)
        .then([{ type: 'DeleteNode', data: { nodeId: 'b', at } }, again(250)]);
      // Deleted now: the next look finds them gone (or one refused, busy) and completes.
      given(removal, { asked, nodes: { b: node('offline'), c: node('gone') } })
        .when(stepDue)
        .then([{ type: 'DeleteNode', data: { nodeId: 'b', at } }, again(0)]);
      given(removal, { asked, nodes: { b: node('gone'), c: node('gone') } })
        .when(stepDue)
        .then([complete('remove_nodes', '2 node(s) removed'), again(0)]);
    });

    it('succeeds once its nodes are removed', () => {
      given([...removing, started('remove_nodes'), done('remove_nodes')])
        .when(stepDue)
        .then([succeed()]);
    });
  });

  describe('deletion', () => {
    const deletion = requested('delete_node_pool');

    it('chooses every member', () => {
      const members = [
        { nodeId: 'a', hostname: 'h-a', runningSessions: 0, capacity: { cpu: 8, memoryGiB: 32 } },
        { nodeId: 'b', hostname: 'h-b', runningSessions: 0, capacity: { cpu: 8, memoryGiB: 32 } },
      ];
      expect(given([deletion], { members }).when(stepDue).thenOutputs()).toContainEqual(
        complete('choose_nodes', 'h-b, h-a'),
      );
    });

    it('marks the pool deleted once its nodes are removed, and succeeds', () => {
      const removed = [
        deletion,
        chose('a'),
        started('drain_nodes'),
        done('drain_nodes'),
        started('remove_nodes'),
        done('remove_nodes'),
      ];
      given(removed)
        .when(stepDue)
        .then([
          start('delete_pool'),
          { type: 'MarkPoolDeleted', data: { at } },
          complete('delete_pool', null),
          succeed(),
        ]);
    });
  });

  describe('resize', () => {
    const to = { cpu: 16, memoryGiB: 64 };
    const resize = requested('resize_node_pool', { resizeTo: to, addHostnames: ['n-1', 'n-2'] });
    const member = (id: string, cpu: number, runningSessions = 0) => ({
      nodeId: id,
      hostname: `h-${id}`,
      runningSessions,
      capacity: { cpu, memoryGiB: 64 },
    });

    it('fails without a target shape', () => {
      given([requested('resize_node_pool')])
        .when(stepDue)
        .then([fail('resize without a target shape')]);
    });

    it('chooses the nodes of another shape, one per replacement', () => {
      const members = [member('a', 8, 1), member('b', 16), member('c', 8), member('d', 4)];
      expect(given([resize], { members }).when(stepDue).thenOutputs()).toEqual([
        start('choose_nodes'),
        {
          type: 'ChooseOperationNodes',
          data: {
            nodes: [
              { nodeId: 'd', hostname: 'h-d' },
              { nodeId: 'c', hostname: 'h-c' },
            ],
            at,
          },
        },
        complete('choose_nodes', 'h-d, h-c'),
        again(0),
      ]);
    });

    const chosen = [resize, chose('a', 'b')];

    it('adds a node of the new shape once, and waits for it in the pool', () => {
      given(chosen)
        .when(stepDue)
        .then([start('add_node n-1'), again(0)]);
      const adding = [...chosen, started('add_node n-1')];
      given(adding)
        .when(stepDue)
        .then([{ type: 'CreateNodes', data: { hostnames: ['n-1'], shape: to } }, again(0)]);
      const asked = new Set(['create n-1']);
      given(adding, { asked })
        .when(stepDue)
        .then([again(250)]);
      given(adding, { asked, registered: new Set(['n-1']) })
        .when(stepDue)
        .then([complete('add_node n-1', 'n-1 registered with 16 vCPU / 64 GiB'), again(0)]);
    });

    it('then drains the old node, and removes it', () => {
      const added = [...chosen, started('add_node n-1'), done('add_node n-1')];
      given(added)
        .when(stepDue)
        .then([start('drain_node h-a'), again(0)]);
      given([...added, started('drain_node h-a')], { nodes: { a: node('online', 1) } })
        .when(stepDue)
        .then([{ type: 'DrainNode', data: { nodeId: 'a' } }, again(250)]);
      const drainedA = [...added, started('drain_node h-a'), drained('a')];
      given(drainedA, { nodes: { a: node('online') }, drains: { 'd-a': 'completed' } })
        .when(stepDue)
        .then([complete('drain_node h-a', null), again(0)]);
      const removing = [...drainedA, done('drain_node h-a')];
      given(removing)
        .when(stepDue)
        .then([start('remove_node h-a'), again(0)]);
      given([...removing, started('remove_node h-a')], { nodes: { a: node('online') } })
        .when(stepDue)
        .then([
          { type: 'RemoveNodes', data: { key: 'a', nodes: [{ nodeId: 'a', hostname: 'h-a' }] } },
          again(0),
        ]);
      given([...removing, started('remove_node h-a')], {
        asked: new Set(['removal a']),
        nodes: { a: node('gone') },
      })
        .when(stepDue)
        .then([complete('remove_node h-a', null), again(0)]);
      // The next replacement follows.
      given([...removing, started('remove_node h-a'), done('remove_node h-a')])
        .when(stepDue)
        .then([start('add_node n-2'), again(0)]);
    });

    it('changes the pool shape once every node is replaced, and succeeds', () => {
      const replaced = [chose('a'), 'n-1'].flatMap((x) =>
        typeof x === 'string'
          ? [`add_node ${x}`, 'drain_node h-a', 'remove_node h-a'].flatMap((s) => [
              started(s),
              done(s),
            ])
          : [x],
      );
      given([requested('resize_node_pool', { resizeTo: to, addHostnames: ['n-1'] }), ...replaced])
        .when(stepDue)
        .then([
          start('update_spec'),
          { type: 'ChangePoolSpec', data: { cpu: 16, memoryGiB: 64, at } },
          complete('update_spec', '16 vCPU / 64 GiB'),
          succeed(),
        ]);
    });
  });
});
