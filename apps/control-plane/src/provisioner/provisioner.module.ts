import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { Config } from '../config/config';
import { Runtime } from '../platform/runtime/runtime.service';
import { CONFIG } from '../platform/runtime/tokens';
import { HttpProvisioner } from './http-provisioner';
import { PROVISIONER } from './provisioner.port';
import { SimulatedProvisioner } from './simulated-provisioner';
import { CREDENTIAL_ISSUER } from './credential-issuer.port';
import { HttpCredentialIssuer } from './http-credential-issuer';
import { SimulatedCredentialIssuer } from './simulated-credential-issuer';
import { JWT_SECRET } from '../platform/auth/auth.module';

/** PROVISIONER_URL set: the HTTP adapter; unset: the simulated one, in process. */
@Module({
  providers: [
    // Its nodes report through the nodes slice's ReportInventory, the operator endpoint's own
    // path: one InventoryService, so its per-node and per-cluster turns cover them too.
    SimulatedProvisioner,
    {
      provide: PROVISIONER,
      useFactory: (config: Config, simulated: SimulatedProvisioner) =>
        config.provisionerUrl ? new HttpProvisioner(config.provisionerUrl) : simulated,
      inject: [CONFIG, SimulatedProvisioner],
    },
    {
      provide: CREDENTIAL_ISSUER,
      useFactory: (config: Config, secret: string) =>
        config.provisionerUrl
          ? new HttpCredentialIssuer(config.provisionerUrl)
          : new SimulatedCredentialIssuer(secret),
      inject: [CONFIG, JWT_SECRET],
    },
  ],
  exports: [PROVISIONER, CREDENTIAL_ISSUER],
})
export class ProvisionerModule implements OnModuleInit {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(SimulatedProvisioner) private readonly simulated: SimulatedProvisioner,
    @Inject(Runtime) private readonly runtime: Runtime,
  ) {}

  onModuleInit(): void {
    if (!this.config.provisionerUrl) this.runtime.afterStart(async () => this.simulated.start());
  }
}
