import { OperationDoc } from './operations.projection';

/** An operation as the API shows it (GET /v1/operations, /v1/operations/{id}). */
export type OperationView = {
  operationId: string;
  type: string;
  status: string;
  steps: Array<{
    name: string;
    status: string;
    at: string;
    startedAt: string;
    detail: string | null;
  }>;
  error: string | null;
  clusterId: string;
  poolId: string | null;
  fromSize: number | null;
  desiredSize: number | null;
  nodes: Array<{ nodeId: string; hostname: string }>;
  reason: string | null;
  createdAt: string;
  deadlineAt: string;
  endedAt: string | null;
};

export const operationView = (doc: OperationDoc): OperationView => ({
  operationId: doc.operationId,
  type: doc.operationType,
  status: doc.status,
  steps: doc.steps.map((s) => ({
    name: s.name,
    status: s.status,
    at: s.at,
    startedAt: s.startedAt,
    detail: s.detail,
  })),
  error: doc.error,
  clusterId: doc.clusterId,
  poolId: doc.poolId,
  fromSize: doc.fromSize,
  desiredSize: doc.desiredSize,
  nodes: doc.chosen ? [...doc.chosen] : [],
  reason: doc.reason,
  createdAt: doc.requestedAt,
  deadlineAt: doc.deadlineAt,
  endedAt: doc.endedAt,
});
