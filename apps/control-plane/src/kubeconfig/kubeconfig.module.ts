import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { EventCodec, Message } from '@fleet/kernel';
import { EventTypes } from '../platform/runtime/event-types';
import { ProvisionerModule } from '../provisioner';
import { KubeconfigController } from './kubeconfig.controller';
import { kubeconfigCodec } from './kubeconfig.events';
import { KubeconfigService } from './kubeconfig.service';

@Module({
  imports: [ProvisionerModule],
  controllers: [KubeconfigController],
  providers: [KubeconfigService],
})
export class KubeconfigModule implements OnModuleInit {
  constructor(@Inject(EventTypes) private readonly types: EventTypes) {}

  onModuleInit(): void {
    this.types.register(kubeconfigCodec as unknown as EventCodec<Message>);
  }
}
