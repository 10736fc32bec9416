import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { systemContext, uuidFrom } from '@fleet/kernel';
import { AdoptCluster } from '../clusters';
import { nodeCodec } from './node.events';

/** Adoption: a cluster first seen in an operator's report exists from then on, as running. */
@Injectable()
export class ClusterAdoptionReactor {
  constructor(@Inject(CommandBus) private readonly commands: CommandBus) {}

  async react(stored: StoredEvent): Promise<void> {
    if (!stored.streamId.startsWith('node-')) return;
    const event = nodeCodec.decode(stored.type, stored.data);
    if (event?.type !== 'NodeRegistered') return;
    const { clusterId, nodeId, registeredAt } = event.data;
    const commandId = uuidFrom('adopt-cluster', clusterId);
    await this.commands.execute(
      new AdoptCluster(
        { clusterId, seenNodeId: nodeId, at: registeredAt },
        systemContext(commandId, { cause: stored, now: new Date(registeredAt) }),
      ),
    );
  }
}
