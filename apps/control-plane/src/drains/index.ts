/** The drains slice as other slices see it: nothing else of this folder is imported elsewhere. */
export { DrainEvent, DrainOutcome, drainCodec, drainStreamId } from './drain.workflow';
export { DRAINS, DrainDoc } from './drains.projection';
export { DrainNode } from './drain-node.handler';
export { DrainsModule } from './drains.module';
