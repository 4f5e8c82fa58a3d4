import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DatasetsModule } from '../datasets/datasets.module';
import {
  ProjectCounterEntity,
  TestCaseComponentCoverageEntity,
  TestCaseEntity,
} from './entities/test-case.entity';
import { TestCasesController } from './test-cases.controller';
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
  controllers: [TestCasesController],
  providers: [TestCasesService],
  exports: [TestCasesService],
})
export class TestCasesModule {}
