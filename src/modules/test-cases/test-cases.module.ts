import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DatasetsModule } from '../datasets/datasets.module';
import { BindingsController } from './dataset-bindings.controller';
import {
  ProjectCounterEntity,
  TestCaseComponentCoverageEntity,
  TestCaseEntity,
} from './entities/test-case.entity';
import { TestCasesController } from './test-cases.controller';
import { TestCasesRepository } from './test-cases.repository';
import { TestCasesService } from './test-cases.service';

@Module({
  imports: [
    TypeOrmModule.forFeature([
      TestCaseEntity,
      TestCaseComponentCoverageEntity,
      ProjectCounterEntity,
    ]),
    DatasetsModule,
  ],
  controllers: [TestCasesController, BindingsController],
  providers: [TestCasesService, TestCasesRepository],
  exports: [TestCasesService, TestCasesRepository],
})
export class TestCasesModule {}
