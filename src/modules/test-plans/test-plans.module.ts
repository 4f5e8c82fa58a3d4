import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProductsModule } from '../products/products.module';
import { RunItemsModule } from '../run-items/run-items.module';
import { TestCasesModule } from '../test-cases/test-cases.module';
import { TestRunsModule } from '../test-runs/test-runs.module';
import {
  TestPlanCaseEntity,
  TestPlanEntity,
  TestPlanSuiteEntity,
} from './entities/test-plan.entity';
import { TestPlansController } from './test-plans.controller';
import { TestPlansRepository } from './test-plans.repository';
import { TestPlansService } from './test-plans.service';

@Module({
  imports: [
    TypeOrmModule.forFeature([TestPlanEntity, TestPlanSuiteEntity, TestPlanCaseEntity]),
    ProductsModule,
    TestRunsModule,
    RunItemsModule,
    TestCasesModule,
  ],
  controllers: [TestPlansController],
  providers: [TestPlansService, TestPlansRepository],
  exports: [TestPlansService],
})
export class TestPlansModule {}
