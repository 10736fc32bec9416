import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, UnavailableError } from '@fleet/kernel';
import { ErrorEnvelope, STATUS_BY_KIND, envelope } from './error-envelope';

const CODE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'validation_failed',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'too_many_requests',
};

/** Errors Fastify raises before a route runs (body parsing, limits), by their error code. */
const FASTIFY_ERRORS: Readonly<Record<string, [number, string]>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'validation_failed'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'validation_failed'],
};

/**
 * The one place where errors become HTTP: typed domain errors map to the contract's codes;
 * anything unexpected is a 500 that names the correlation id and leaks nothing else.
 */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    void this.send(exception, ctx.getRequest<FastifyRequest>(), ctx.getResponse<FastifyReply>());
  }

  /** Answers `request` with the envelope for `exception` (the lean routes' errors come here too). */
  send(exception: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const correlationId =
      (request as FastifyRequest & { correlationId?: string }).correlationId ?? String(request.id);
    const [status, body] = this.describe(exception, correlationId);
    // A dependency out of reach is usually back within seconds.
    if (status === 503) void reply.header('retry-after', '1');
    return reply.status(status).send(body);
  }

  describe(exception: unknown, correlationId: string): [number, ErrorEnvelope] {
    if (exception instanceof DomainError) {
      return [
        STATUS_BY_KIND[exception.kind],
        envelope(exception.code, exception.message, exception.details),
      ];
    }
    if (exception instanceof UnavailableError) {
      this.logger.warn(
        { correlationId, dependency: exception.dependency, err: String(exception.cause) },
        'dependency unavailable',
      );
      return [
        503,
        envelope('unavailable', exception.message, {
          dependency: exception.dependency,
          correlationId,
        }),
      ];
    }
    const fastifyCode = (exception as { code?: unknown })?.code;
    if (typeof fastifyCode === 'string' && FASTIFY_ERRORS[fastifyCode]) {
      const [status, code] = FASTIFY_ERRORS[fastifyCode];
      const message =
        status === 415
          ? 'request bodies are JSON: send Content-Type: application/json'
          : (exception as Error).message;
      return [status, envelope(code, message)];
    }
    if (
      exception instanceof SyntaxError ||
      (exception as { type?: string })?.type === 'entity.parse.failed'
    ) {
      return [400, envelope('validation_failed', 'request body is not valid JSON')];
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status < 500) {
        const code = CODE_BY_STATUS[status] ?? 'request_refused';
        const message = status === 404 ? 'no such route' : exception.message || 'request refused';
        return [status, envelope(code, message)];
      }
    }
    const statusCode = (exception as { statusCode?: unknown })?.statusCode;
    if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
      return [
        statusCode,
        envelope(CODE_BY_STATUS[statusCode] ?? 'request_refused', (exception as Error).message),
      ];
    }
    this.logger.error(
      {
        correlationId,
        err:
          exception instanceof Error
            ? { name: exception.name, message: exception.message, stack: exception.stack }
            : String(exception),
      },
      'unexpected error',
    );
    return [
      500,
      envelope('internal_error', 'unexpected error; quote the correlation id to the operators', {
        correlationId,
      }),
    ];
  }
}
