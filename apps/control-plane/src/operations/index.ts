/** The operations slice as the rest of the app sees it (it sits on top: no slice imports it). */
export { OperationEvent, operationCodec, operationStreamId } from './operation.events';
export { OPERATIONS, OperationDoc } from './operations.projection';
export { OperationState } from './operation.decider';
export {
  EndOperation,
  GetOperationState,
  OpenMeshOperation,
  OpenRestoreOperation,
  ReportOperationStep,
} from './tracked-operations';
export { OperationsModule } from './operations.module';
