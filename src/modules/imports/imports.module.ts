import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RunItemsModule } from '../run-items/run-items.module';
import { TestRunsModule } from '../test-runs/test-runs.module';
import { JunitImportEntity } from './entities/junit-import.entity';
import { ImportRepository } from './import.repository';
import { ImportsController } from './imports.controller';
import { ImportsService } from './imports.service';

@Module({
  imports: [TypeOrmModule.forFeature([JunitImportEntity]), TestRunsModule, RunItemsModule],
  controllers: [ImportsController],
  providers: [ImportsService, ImportRepository],
  exports: [ImportsService],
})
export class ImportsModule {}
