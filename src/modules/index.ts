import { TestPlansModule } from './test-plans/test-plans.module';
import { DatasetsModule } from './datasets/datasets.module';
import { SuitesModule } from './suites/suites.module';
import { TestCasesModule } from './test-cases/test-cases.module';
import { EnvironmentsModule } from './environments/environments.module';
import { ComponentsModule } from './components/components.module';
import { ExportsModule } from './exports/exports.module';
import { HealthModule } from './health/health.module';
import { ImportsModule } from './imports/imports.module';
import { InsightsModule } from './insights/insights.module';
import { MilestonesModule } from './milestones/milestones.module';
import { ProductsModule } from './products/products.module';
import { ProjectsModule } from './projects/projects.module';
import { RunItemsModule } from './run-items/run-items.module';
import { TestRunsModule } from './test-runs/test-runs.module';
import { UsersModule } from './users/users.module';
import { WebhooksModule } from './webhooks/webhooks.module';

/** Every feature module of the service. A new feature adds its module here (one line). */
export const FEATURE_MODULES = [HealthModule, UsersModule, ProjectsModule, EnvironmentsModule, MilestonesModule, TestRunsModule, RunItemsModule, ComponentsModule, ProductsModule, SuitesModule, InsightsModule, TestCasesModule, DatasetsModule, ImportsModule, TestPlansModule, ExportsModule, WebhooksModule];
