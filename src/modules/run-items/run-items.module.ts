import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DatasetsModule } from '../datasets/datasets.module';
import { TestRunsModule } from '../test-runs/test-runs.module';
import { RunItemHistoryEntity } from './entities/run-item-history.entity';
import { RunItemRowEntity } from './entities/run-item-row.entity';
import { RunItemEntity } from './entities/run-item.entity';
import { RunItemsController } from './run-items.controller';
import { RunItemsRepository } from './run-items.repository';
import { RunItemsService } from './run-items.service';
import { RunResultsWriter } from './run-results.writer';

@Module({
  imports: [
    TypeOrmModule.forFeature([RunItemEntity, RunItemRowEntity, RunItemHistoryEntity]),
    TestRunsModule,
    DatasetsModule,
  ],
  controllers: [RunItemsController],
  providers: [RunItemsService, RunItemsRepository, RunResultsWriter],
  exports: [RunResultsWriter],
})
export class RunItemsModule {}
