import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import { AccessService } from './access/access.service';
import { AuthenticationService } from './auth/authentication.service';
import { Db } from './persistence/db.service';
import { MetricsService } from './http/metrics.service';
import { ProblemFilter } from './errors/problem.filter';

/** Cross-cutting providers every feature module may inject. */
@Global()
@Module({})
export class CommonModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CommonModule,
      providers: [{ provide: APP_CONFIG, useValue: config }, Db, AccessService, AuthenticationService, MetricsService, ProblemFilter],
      exports: [APP_CONFIG, Db, AccessService, AuthenticationService, MetricsService, ProblemFilter],
    };
  }
}
