import { createHash } from 'node:crypto';
import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import { Observable, from, of, switchMap, tap } from 'rxjs';
import { DomainError, uuidFrom } from '../../../../../libs/kernel/src';
import { validationFailed } from '../errors/error-envelope';
import { PlatformRequest } from '../http/command-context';
import { IdempotencyStore } from './idempotency.store';

export const IDEMPOTENCY_STORE = Symbol('IDEMPOTENCY_STORE');

const KEY = /^[\x21-\x7e]{1,255}$/;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** JSON with object keys sorted, so equal bodies hash equal whatever their key order. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
};

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * `Idempotency-Key` on a mutating request: the same key and body give the stored response
 * and append nothing (the command id, and so every event id, derives from the key); the same
 * key with another body is refused. Only successful responses are kept: a refused command
 * changed nothing, so its retry is decided afresh.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(@Inject(IDEMPOTENCY_STORE) private readonly store: IdempotencyStore) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<
      PlatformRequest & {
        method: string;
        url: string;
        headers: Record<string, unknown>;
        body?: unknown;
        routeOptions?: { url?: string };
      }
    >();
    const key = request.headers['idempotency-key'];
    if (!MUTATING.has(request.method) || key === undefined) return next.handle();
    if (typeof key !== 'string' || !KEY.test(key)) {
      throw validationFailed([
        { field: 'Idempotency-Key', problems: ['must be 1 to 255 visible ASCII characters'] },
      ]);
    }
    const path = request.url.split('?')[0];
    const scope = sha256([request.caller?.sub ?? '', request.method, path, key].join('\n'));
    const bodyHash = sha256(canonical(request.body));
    return from(this.replayOrRun(scope, bodyHash, request, next)).pipe(switchMap((o) => o));
  }

  private async replayOrRun(
    scope: string,
    bodyHash: string,
    request: PlatformRequest,
    next: CallHandler,
  ): Promise<Observable<unknown>> {
    // A concurrent request with the same key waits for the first, then replays it.
    const running = this.inFlight.get(scope);
    if (running) await running.catch(() => undefined);
    const stored = await this.store.get(scope);
    if (stored) {
      if (stored.bodyHash !== bodyHash) {
        throw new DomainError(
          'idempotency_key_reused',
          'this Idempotency-Key was used with another request body',
          'conflict',
        );
      }
      return of(stored.body);
    }
    request.commandId = uuidFrom('idempotency', scope);
    let settle: (v?: unknown) => void = () => undefined;
    this.inFlight.set(scope, new Promise((resolve) => (settle = resolve)));
    const done = () => {
      this.inFlight.delete(scope);
      settle();
    };
    return next.handle().pipe(
      switchMap((body) =>
        from(
          this.store.put(scope, { bodyHash, body: body ?? null, at: Date.now() }).then(() => body),
        ),
      ),
      tap({ complete: done, error: done, finalize: done }),
    );
  }
}
