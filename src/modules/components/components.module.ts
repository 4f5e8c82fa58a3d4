import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CatalogRepository } from './catalog.repository';
import { CatalogService } from './catalog.service';
import { ComponentsController } from './components.controller';
import { ComponentsRepository } from './components.repository';
import { ComponentsService } from './components.service';
import { ComponentDependencyEntity } from './entities/component-dependency.entity';
import { ComponentEntity } from './entities/component.entity';

@Module({
  imports: [TypeOrmModule.forFeature([ComponentEntity, ComponentDependencyEntity])],
  controllers: [ComponentsController],
  providers: [ComponentsService, ComponentsRepository, CatalogService, CatalogRepository],
  exports: [ComponentsService, CatalogService],
})
export class ComponentsModule {}
