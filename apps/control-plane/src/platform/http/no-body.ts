import {
  applyDecorators,
  CanActivate,
  ExecutionContext,
  Injectable,
  UseGuards,
} from '@nestjs/common';
import { validationFailed } from '../errors/error-envelope';

/**
 * Refuses a body on a command that takes none (pause, uncordon, delete...), as a DTO refuses
 * unknown fields: an empty body, `null` or `{}` pass; any field is named in a 400. A route
 * guard, so it runs after the global auth guard (401 and 403 keep precedence).
 */
@Injectable()
export class NoBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const body = context.switchToHttp().getRequest<{ body?: unknown }>().body;
    if (body === undefined || body === null) return true;
    if (typeof body !== 'object' || Array.isArray(body)) {
      throw validationFailed([
        { field: 'body', problems: ['this command takes no body: send none, or {}'] },
      ]);
    }
    const fields = Object.keys(body);
    if (fields.length > 0) {
      throw validationFailed(
        fields.map((field) => ({ field, problems: [`property ${field} should not exist`] })),
      );
    }
    return true;
  }
}

/** The route's command takes no body: see NoBodyGuard. */
export const NoBody = (): MethodDecorator & ClassDecorator =>
  applyDecorators(UseGuards(NoBodyGuard));
