import { Injectable } from '@nestjs/common';
import { Projection, Reactor } from '@fleet/cqrs';

/**
 * Features declare their projections and reactors here while modules initialise; the
 * runtime starts them all once, after every module has registered.
 */
@Injectable()
export class SubscriptionsRegistry {
  readonly projections: Projection[] = [];
  readonly reactors: Reactor[] = [];

  addProjection(projection: Projection): void {
    this.projections.push(projection);
  }

  addReactor(reactor: Reactor): void {
    this.reactors.push(reactor);
  }
}
