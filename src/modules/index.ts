import { HealthModule } from './health/health.module';
import { ProjectsModule } from './projects/projects.module';
import { UsersModule } from './users/users.module';

/** Every feature module of the service. A new feature adds its module here (one line). */
export const FEATURE_MODULES = [HealthModule, UsersModule, ProjectsModule];
