import { Module } from '@nestjs/common';
import { Config } from '../config/config';
import { CONFIG } from '../platform/runtime/tokens';
import { HttpMeshConnector } from './http-mesh-connector';
import { MESH_CONNECTOR } from './mesh-connector.port';
import { SimulatedMeshConnector } from './simulated-mesh-connector';

/** PROVISIONER_URL set: the HTTP adapter; unset: the simulated mesh, in process. */
@Module({
  providers: [
    {
      provide: MESH_CONNECTOR,
      useFactory: (config: Config) =>
        config.provisionerUrl
          ? new HttpMeshConnector(config.provisionerUrl)
          : new SimulatedMeshConnector(),
      inject: [CONFIG],
    },
  ],
  exports: [MESH_CONNECTOR],
})
export class MeshConnectorModule {}
