import { Module } from '@nestjs/common';
import { CaseInsightsController, RunComparisonController } from './insights.controller';
import { InsightsRepository } from './insights.repository';
import { InsightsService } from './insights.service';

/**
 * Read-only insights over recorded results (issue #17): run comparison, case history, flaky
 * tests. Imports no other module (it reads their tables through its own repository).
 */
@Module({
  controllers: [RunComparisonController, CaseInsightsController],
  providers: [InsightsService, InsightsRepository],
})
export class InsightsModule {}
