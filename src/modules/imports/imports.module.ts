import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RunItemsModule } from '../run-items/run-items.module';
import { SuitesModule } from '../suites/suites.module';
import { TestCasesModule } from '../test-cases/test-cases.module';
import { TestRunsModule } from '../test-runs/test-runs.module';
import { JunitImportEntity } from './entities/junit-import.entity';
import { ImportJobHooks, ImportJobRunner } from './import-job';
import { ImportPlanner } from './import-plan';
import { ImportRepository } from './import.repository';
import { ImportsController } from './imports.controller';
import { ImportsService } from './imports.service';

@Module({
  imports: [
    TypeOrmModule.forFeature([JunitImportEntity]),
    TestRunsModule,
    RunItemsModule,
    SuitesModule,
    TestCasesModule,
  ],
  controllers: [ImportsController],
  providers: [ImportsService, ImportPlanner, ImportRepository, ImportJobRunner, ImportJobHooks],
  exports: [ImportsService],
})
export class ImportsModule {}
