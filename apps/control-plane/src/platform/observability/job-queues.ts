import { Injectable } from '@nestjs/common';

/**
 * The delayed-job queues features use, so metrics can report each one's backlog. A feature
 * declares its queue next to `jobs.register(queue, ...)`; an undeclared queue still runs,
 * it just has no `fleet_delayed_jobs` series.
 */
@Injectable()
export class JobQueues {
  private readonly declared = new Set<string>();

  declare(...queues: string[]): void {
    for (const queue of queues) this.declared.add(queue);
  }

  get names(): string[] {
    return [...this.declared].sort();
  }
}
