import { Aggregate } from '@fleet/cqrs';
import { Decider } from '@fleet/kernel';
import { KubeconfigEvent, kubeconfigCodec } from './kubeconfig.events';

export type KubeconfigCommand = { type: 'RecordKubeconfigIssued'; data: KubeconfigEvent['data'] };

/** How many were issued: nothing refuses a record, the credential was already handed out. */
export type KubeconfigState = { readonly issued: number };

export const kubeconfigDecider: Decider<KubeconfigCommand, KubeconfigEvent, KubeconfigState> = {
  initialState: () => ({ issued: 0 }),
  evolve: (state) => ({ issued: state.issued + 1 }),
  // Idempotent by the command id (the event id derives from it): a replay records nothing new.
  decide: (command) => [{ type: 'KubeconfigIssued', data: command.data }],
};

export const kubeconfigAggregate: Aggregate<KubeconfigCommand, KubeconfigEvent, KubeconfigState> = {
  name: 'kubeconfig',
  decider: kubeconfigDecider,
  codec: kubeconfigCodec,
};
