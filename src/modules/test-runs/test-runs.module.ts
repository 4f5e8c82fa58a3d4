import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TestRunEntity } from './entities/test-run.entity';
import { TestRunsController } from './test-runs.controller';
import { TestRunsRepository } from './test-runs.repository';
import { TestRunsService } from './test-runs.service';

@Module({
  imports: [TypeOrmModule.forFeature([TestRunEntity])],
  controllers: [TestRunsController],
  providers: [TestRunsService, TestRunsRepository],
  exports: [TestRunsService],
})
export class TestRunsModule {}
