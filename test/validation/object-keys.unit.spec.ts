import 'reflect-metadata';
import { DomainError } from '@fleet/kernel';
import { InventoryReportDto } from '../../apps/control-plane/src/nodes/reporting/inventory.dto';
import { CreateNodePoolDto } from '../../apps/control-plane/src/pools/pools.dto';
import { CreateSessionDto } from '../../apps/control-plane/src/sessions/sessions.dto';
import {
  objectKeyPaths,
  OBJECT_KEYS,
  refuseObjectKeys,
} from '../../apps/control-plane/src/platform/http/object-keys';

const node = (over: Record<string, unknown> = {}) => ({
  hostname: 'h',
  role: 'gpu',
  labels: { 'fleet/mode': 'shared' },
  capacity: { cpu: 1, memoryGiB: 1, diskGiB: 1 },
  gpus: [{ uuid: 'g', model: 'L40S', memoryGiB: 8 }],
  kubeletReady: true,
  ...over,
});

describe('fields named like Object.prototype members', () => {
  it('are every member of Object.prototype, and prototype', () => {
    for (const key of [
      'constructor',
      'prototype',
      '__proto__',
      'toString',
      'toLocaleString',
      'valueOf',
      'hasOwnProperty',
      'isPrototypeOf',
      'propertyIsEnumerable',
      '__defineGetter__',
      '__defineSetter__',
      '__lookupGetter__',
      '__lookupSetter__',
    ]) {
      expect(OBJECT_KEYS.has(key)).toBe(true);
    }
    expect(OBJECT_KEYS.has('labels')).toBe(false);
  });

  it('are found at the top of a body or query', () => {
    const body = JSON.parse('{"kind":"cpu","toString":1,"__proto__":2,"valueOf":3}');
    expect(objectKeyPaths(body, CreateSessionDto)).toEqual(['toString', '__proto__', 'valueOf']);
  });

  it('are found in nested DTOs and their arrays, named with their path', () => {
    const body = {
      clusterId: 'c1',
      nodes: [
        node(),
        node({
          constructor: 1,
          capacity: { cpu: 1, memoryGiB: 1, diskGiB: 1, prototype: 1 },
          gpus: [{ uuid: 'g', model: 'L40S', memoryGiB: 8 }, { hasOwnProperty: 'x' }],
        }),
      ],
    };
    expect(objectKeyPaths(body, InventoryReportDto)).toEqual([
      'nodes.1.capacity.prototype',
      'nodes.1.gpus.1.hasOwnProperty',
      'nodes.1.constructor',
    ]);
    expect(
      objectKeyPaths(
        { name: 'p', kind: 'cpu', access: { constructor: 1 }, autoscaling: { prototype: 1 } },
        CreateNodePoolDto,
      ),
    ).toEqual(['access.constructor', 'autoscaling.prototype']);
  });

  it('are data in a free-form map: a node label may be named constructor or toString', () => {
    const labels = JSON.parse('{"constructor":"a","prototype":"b","toString":"c","__proto__":"d"}');
    expect(
      objectKeyPaths({ clusterId: 'c1', nodes: [node({ labels })] }, InventoryReportDto),
    ).toEqual([]);
  });

  it('are refused as unknown fields, each named', () => {
    let error: unknown;
    try {
      refuseObjectKeys({ clusterId: 'c1', nodes: [node({ valueOf: 1 })] }, InventoryReportDto);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_failed');
    expect((error as DomainError).details).toEqual({
      fields: [{ field: 'nodes.0.valueOf', problems: ['property valueOf should not exist'] }],
    });
    expect(() =>
      refuseObjectKeys({ clusterId: 'c1', nodes: [node()] }, InventoryReportDto),
    ).not.toThrow();
  });
});
