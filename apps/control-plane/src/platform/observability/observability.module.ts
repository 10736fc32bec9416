import { Global, Inject, Module, OnModuleInit } from '@nestjs/common';
import { CommandPipeline } from '@fleet/cqrs';
import { Config } from '../../config/config';
import { CONFIG } from '../runtime/tokens';
import { DEFAULT_READY_MAX_LAG, Health, READY_MAX_LAG } from './health';
import { createLoggers, PinoLoggerService } from './logger';
import { Metrics } from './metrics';
import { ObservabilityController } from './observability.controller';

/**
 * Logs, metrics, health and readiness. Global so features can use the app's pino logger;
 * `installObservability` wires the HTTP hooks.
 */
@Global()
@Module({
  controllers: [ObservabilityController],
  providers: [
    {
      provide: PinoLoggerService,
      inject: [CONFIG],
      useFactory: (config: Config) => {
        const { app, requests } = createLoggers(config.logLevel);
        return new PinoLoggerService(app, requests);
      },
    },
    { provide: READY_MAX_LAG, useValue: DEFAULT_READY_MAX_LAG },
    Metrics,
    Health,
  ],
  exports: [PinoLoggerService, Metrics],
})
export class ObservabilityModule implements OnModuleInit {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(Metrics) private readonly metrics: Metrics,
    @Inject(PinoLoggerService) private readonly logger: PinoLoggerService,
  ) {}

  onModuleInit(): void {
    const log = this.logger.pino.child({ context: 'command' });
    // The pipeline has a single observer: this one feeds both the debug log and the metrics.
    this.pipeline.onOutcome((outcome) => {
      this.metrics.observeCommand(outcome);
      // Every command passes here: its log line is built only when debug is on.
      if (!log.isLevelEnabled('debug')) return;
      log.debug(
        {
          command: outcome.command,
          aggregate: outcome.aggregate,
          result: outcome.result,
          events: outcome.events,
          ms: Math.round(outcome.ms * 100) / 100,
          ...(outcome.count === undefined ? {} : { count: outcome.count }),
        },
        outcome.count === undefined ? 'command handled' : 'commands handled',
      );
    });
  }
}
