import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { EventTypes } from '../platform/runtime/event-types';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { sessionCodec } from '../sessions';
import { BillingController } from './billing.controller';
import { billingProjection } from './billing.projection';

/**
 * Billing: the insert-only `billing_records` read model projected from session events, the
 * records query with totals, and per-session verification against the session stream.
 */
@Module({ controllers: [BillingController] })
export class BillingModule implements OnModuleInit {
  constructor(
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(EventTypes) private readonly eventTypes: EventTypes,
  ) {}

  onModuleInit(): void {
    // Idempotent: the sessions feature may register the same codec.
    this.eventTypes.register(sessionCodec);
    this.registry.addProjection(billingProjection);
  }
}
