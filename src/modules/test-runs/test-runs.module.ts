import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { TestRunEntity } from './entities/test-run.entity';
import { TestRunsController } from './test-runs.controller';
import { TestRunsRepository } from './test-runs.repository';
import { TestRunsService } from './test-runs.service';
import { SnapshotCache } from './snapshot-cache';

@Module({
  imports: [TypeOrmModule.forFeature([TestRunEntity])],
  controllers: [TestRunsController],
  providers: [
    TestRunsService,
    TestRunsRepository,
    {
      // One per process: revisions' snapshots as the JSON bytes runs answer (immutable).
      provide: SnapshotCache,
      useFactory: (config: AppConfig) => new SnapshotCache(config.snapshotCacheBytes),
      inject: [APP_CONFIG],
    },
  ],
  exports: [TestRunsService],
})
export class TestRunsModule {}
