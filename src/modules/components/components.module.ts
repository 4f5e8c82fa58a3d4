import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CatalogRepository } from './catalog.repository';
import { CatalogService } from './catalog.service';
import { ComponentsController } from './components.controller';
import { ComponentsRepository } from './components.repository';
import { ComponentsService } from './components.service';
import { ComponentDependencyEntity } from './entities/component-dependency.entity';
import { ComponentGraphVersionEntity } from './entities/component-graph-version.entity';
import { ComponentEntity } from './entities/component.entity';
import { ProjectGraphCache } from './graph-cache';

@Module({
  imports: [
    TypeOrmModule.forFeature([
      ComponentEntity,
      ComponentDependencyEntity,
      ComponentGraphVersionEntity,
    ]),
  ],
  controllers: [ComponentsController],
  providers: [
    ComponentsService,
    ComponentsRepository,
    CatalogService,
    CatalogRepository,
    {
      // One per process: graphs keyed by (project, graph version), see graph-cache.ts.
      provide: ProjectGraphCache,
      useFactory: (config: AppConfig) => new ProjectGraphCache(config.componentGraphCacheBytes),
      inject: [APP_CONFIG],
    },
  ],
  exports: [ComponentsService, CatalogService],
})
export class ComponentsModule {}
