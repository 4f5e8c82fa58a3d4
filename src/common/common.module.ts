import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import { AccessRepository } from './access/access.repository';
import { AccessService } from './access/access.service';
import { AuthenticationService } from './auth/authentication.service';
import { CredentialsRepository } from './auth/credentials.repository';
import { Db } from './persistence/db.service';
import { MetricsService } from './http/metrics.service';
import { Preconditions } from './http/preconditions';
import { PreconditionsRepository } from './http/preconditions.repository';
import { ProblemFilter } from './errors/problem.filter';
import { CursorCodec } from './pagination/cursor';

/** Cross-cutting providers every feature module may inject. */
@Global()
@Module({})
export class CommonModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CommonModule,
      providers: [{ provide: APP_CONFIG, useValue: config }, Db, AccessRepository, AccessService, CredentialsRepository, AuthenticationService, MetricsService, ProblemFilter, Preconditions, PreconditionsRepository,
        // List cursors are tagged with a key derived from AUTH_SECRET.
        { provide: CursorCodec, useFactory: (c: AppConfig) => new CursorCodec(c.authSecret), inject: [APP_CONFIG] }],
      exports: [APP_CONFIG, Db, AccessService, AuthenticationService, MetricsService, ProblemFilter, CursorCodec, Preconditions],
    };
  }
}
