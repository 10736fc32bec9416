import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CommandContext } from '@fleet/kernel';
import { Caller } from '../platform/auth/caller';
import { CurrentCaller, Roles } from '../platform/auth/decorators';
import { checkId } from '../platform/http/ids';
import { Ctx } from '../platform/http/command-context';
import { CreateSessionDto, ListSessionsQuery, SessionPage, SessionView } from './sessions.dto';
import { SessionsService } from './sessions.service';
import { NoBody } from '../platform/http/no-body';

const checkSessionId = (id: string): string => checkId('sessionId', id);

@ApiTags('sessions')
@ApiBearerAuth()
@Controller('v1/sessions')
export class SessionsController {
  constructor(@Inject(SessionsService) private readonly sessions: SessionsService) {}

  /** 201 with the session: `running` when placed, `queued` when nothing fits now. */
  @Post()
  @Roles('user', 'admin')
  @ApiCreatedResponse({ type: SessionView })
  create(
    @Body() body: CreateSessionDto,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
  ) {
    return this.sessions.create(body, caller, ctx);
  }

  @Get()
  @Roles('user', 'admin', 'auditor')
  @ApiOkResponse({ type: SessionPage })
  list(@Query() query: ListSessionsQuery, @CurrentCaller() caller: Caller) {
    return this.sessions.list(query, caller);
  }

  @Get(':sessionId')
  @Roles('user', 'admin', 'auditor')
  @ApiOkResponse({ type: SessionView })
  get(@Param('sessionId') id: string, @CurrentCaller() caller: Caller) {
    return this.sessions.get(checkSessionId(id), caller);
  }

  /** Cold pause: the cards are released and billing stops. */
  @Post(':sessionId/pause')
  @NoBody()
  @HttpCode(200)
  @Roles('user', 'admin')
  @ApiOkResponse({ type: SessionView })
  pause(
    @Param('sessionId') id: string,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
  ) {
    return this.sessions.command(checkSessionId(id), caller, ctx, (at) => ({
      type: 'PauseSession',
      data: { reason: 'user', drainId: null, at },
    }));
  }

  /** Placed anywhere that fits, else `queued` until capacity appears. */
  @Post(':sessionId/resume')
  @NoBody()
  @HttpCode(200)
  @Roles('user', 'admin')
  @ApiOkResponse({ type: SessionView })
  resume(
    @Param('sessionId') id: string,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
  ) {
    return this.sessions.command(checkSessionId(id), caller, ctx, (at) => ({
      type: 'ResumeSession',
      data: { displaced: false, drainId: null, at },
    }));
  }

  @Post(':sessionId/terminate')
  @NoBody()
  @HttpCode(200)
  @Roles('user', 'admin')
  @ApiOkResponse({ type: SessionView })
  terminate(
    @Param('sessionId') id: string,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
  ) {
    return this.sessions.command(checkSessionId(id), caller, ctx, (at) => ({
      type: 'TerminateSession',
      data: { reason: 'user', at },
    }));
  }

  @Post(':sessionId/force-terminate')
  @NoBody()
  @HttpCode(200)
  @Roles('admin')
  @ApiOkResponse({ type: SessionView })
  forceTerminate(
    @Param('sessionId') id: string,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
  ) {
    return this.sessions.command(checkSessionId(id), caller, ctx, (at) => ({
      type: 'TerminateSession',
      data: { reason: 'admin_force', at },
    }));
  }
}
