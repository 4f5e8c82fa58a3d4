import { Global, Module } from '@nestjs/common';
import { JobQueue } from './job-queue.service';

/** The PostgreSQL job queue every feature may enqueue on and register workers with. */
@Global()
@Module({ providers: [JobQueue], exports: [JobQueue] })
export class JobsModule {}
