import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { CommandContext, notFound } from '@fleet/kernel';
import { Doc, ReadModelStore } from '@fleet/readmodels/port';
import { Roles } from '../platform/auth/decorators';
import { Ctx } from '../platform/http/command-context';
import { checkId } from '../platform/http/ids';
import { READ_MODELS } from '../platform/runtime/tokens';
import { DrainNode } from './drain-node.handler';
import { DrainsService } from './drains.service';
import { DRAINS, DrainDoc } from './drains.projection';

export class DrainNodeDto {
  @ApiPropertyOptional({ enum: ['relocate', 'force'], default: 'relocate' })
  @IsOptional()
  @IsIn(['relocate', 'force'])
  mode?: 'relocate' | 'force';
}

export class DrainView {
  @ApiProperty() drainId!: string;
  @ApiProperty() nodeId!: string;
  @ApiProperty({ enum: ['relocate', 'force'] }) mode!: string;
  @ApiProperty({ enum: ['running', 'completed'] }) status!: string;
  @ApiProperty({
    nullable: true,
    enum: ['drained', 'cancelled', 'node_offline'],
    description: 'Why a completed drain ended',
  })
  outcome!: string | null;
  @ApiProperty({ type: [String] }) relocated!: string[];
  @ApiProperty({ type: [String] }) queued!: string[];
  @ApiProperty({ type: [String] }) terminated!: string[];
}

@ApiTags('drains')
@ApiBearerAuth()
@Controller('v1')
export class DrainsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(DrainsService) private readonly drains: DrainsService,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
  ) {}

  /** Cordons the node, then relocates (default) or force-terminates its sessions. 202 with the drain's id. */
  @Post('nodes/:nodeId/drain')
  @HttpCode(202)
  @Roles('admin')
  @ApiBody({ type: DrainNodeDto, required: false })
  async drain(
    @Param('nodeId') nodeId: string,
    @Body() body: DrainNodeDto,
    @Ctx() ctx: CommandContext,
  ) {
    const drain = new DrainNode(checkId('nodeId', nodeId), body.mode ?? 'relocate', ctx);
    return { drainId: await this.commands.execute(drain) };
  }

  @Get('nodes/:nodeId/drain-preview')
  @Roles('admin', 'auditor')
  preview(@Param('nodeId') nodeId: string) {
    return this.drains.preview(checkId('nodeId', nodeId));
  }

  @Get('drains/:drainId')
  @Roles('admin', 'auditor')
  async get(@Param('drainId') drainId: string): Promise<DrainView> {
    const doc = await this.readModels.get<DrainDoc & Doc>(DRAINS, checkId('drainId', drainId));
    if (!doc) throw notFound('drain', drainId);
    return {
      drainId: doc.drainId,
      nodeId: doc.nodeId,
      mode: doc.mode,
      status: doc.status,
      outcome: doc.outcome,
      relocated: doc.relocated,
      queued: doc.queued,
      terminated: doc.terminated,
    };
  }
}
