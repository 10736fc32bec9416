import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/decorators';
import { Health } from './health';
import { Metrics } from './metrics';
import { LivenessDto, ReadinessDto } from './observability.dto';

/** Served without a token: probes and scrapers carry none (see API.md, operations endpoints). */
@ApiTags('operations')
@Public()
@Controller()
export class ObservabilityController {
  constructor(
    @Inject(Health) private readonly health: Health,
    @Inject(Metrics) private readonly metrics: Metrics,
  ) {}

  @Get('health/live')
  @ApiOperation({ summary: 'The process is up', security: [] })
  @ApiOkResponse({ type: LivenessDto })
  live(): LivenessDto {
    return { status: 'ok' };
  }

  @Get('health/ready')
  @ApiOperation({
    summary: 'Every store answers and read models are current (503 with the same body when not)',
    security: [],
  })
  @ApiOkResponse({ type: ReadinessDto })
  @ApiResponse({ status: 503, type: ReadinessDto, description: 'not ready' })
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<ReadinessDto> {
    const readiness = await this.health.readiness();
    void reply.status(readiness.status === 'ready' ? 200 : 503);
    return readiness;
  }

  @Get('metrics')
  @ApiOperation({ summary: 'Prometheus metrics (text exposition format)', security: [] })
  @ApiProduces('text/plain')
  @ApiOkResponse({ schema: { type: 'string' } })
  @Header('cache-control', 'no-store')
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const { contentType, body } = await this.metrics.render();
    void reply.type(contentType);
    return body;
  }
}
