/** The mesh slice as other slices see it: nothing else of this folder is imported elsewhere. */
export { MESH_STATUSES, MeshEvent, MeshStatus, meshCodec, meshStreamId } from './mesh.events';
export { MESH_REQUESTS, MeshRequestDoc } from './mesh.projection';
export { MeshModule } from './mesh.module';
