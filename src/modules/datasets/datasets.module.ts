import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BindingExpansionService } from './binding-expansion.service';
import { BindingsRepository } from './bindings.repository';
import { BindingsService } from './bindings.service';
import { DatasetsController } from './datasets.controller';
import { DatasetsRepository } from './datasets.repository';
import { DatasetsService } from './datasets.service';
import {
  DatasetBindingEntity,
  DatasetEntity,
  DatasetRevisionEntity,
} from './entities/dataset.entity';

@Module({
  imports: [TypeOrmModule.forFeature([DatasetEntity, DatasetRevisionEntity, DatasetBindingEntity])],
  controllers: [DatasetsController],
  providers: [
    DatasetsService,
    BindingsService,
    BindingExpansionService,
    DatasetsRepository,
    BindingsRepository,
  ],
  exports: [DatasetsService, BindingsService, BindingExpansionService],
})
export class DatasetsModule {}
