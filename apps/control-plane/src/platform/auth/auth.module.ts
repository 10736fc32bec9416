import { DynamicModule, FactoryProvider, Module, ModuleMetadata, Provider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AuthGuard } from './auth.guard';
import { TokenService } from './token-service';

/** The HS256 secret (a string), normally from resolveJwtSecret(). */
export const JWT_SECRET = Symbol('JWT_SECRET');

export type AuthModuleAsyncOptions = Pick<ModuleMetadata, 'imports'> &
  Pick<FactoryProvider<string>, 'useFactory' | 'inject'>;

const tokenService: Provider = {
  provide: TokenService,
  useFactory: (secret: string) => new TokenService(secret),
  inject: [JWT_SECRET],
};

/**
 * Registers AuthGuard for every route. A root module's own providers are not visible
 * inside an imported module, so the app hands the secret in through forRoot/forRootAsync.
 */
@Module({})
export class AuthModule {
  static forRoot(secret: string): DynamicModule {
    return AuthModule.build([{ provide: JWT_SECRET, useValue: secret }]);
  }

  static forRootAsync(options: AuthModuleAsyncOptions): DynamicModule {
    const secret: FactoryProvider<string> = {
      provide: JWT_SECRET,
      useFactory: options.useFactory,
      inject: options.inject ?? [],
    };
    return { ...AuthModule.build([secret]), imports: options.imports ?? [] };
  }

  private static build(secret: Provider[]): DynamicModule {
    return {
      module: AuthModule,
      global: true,
      providers: [...secret, tokenService, { provide: APP_GUARD, useClass: AuthGuard }],
      exports: [JWT_SECRET, TokenService],
    };
  }
}
