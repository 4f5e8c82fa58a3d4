import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EnvironmentEntity, EnvironmentRevisionEntity } from './entities/environment.entity';
import { EnvironmentDriftController } from './environment-drift.controller';
import { EnvironmentsController } from './environments.controller';
import { EnvironmentsRepository } from './environments.repository';
import { EnvironmentsService } from './environments.service';

@Module({
  imports: [TypeOrmModule.forFeature([EnvironmentEntity, EnvironmentRevisionEntity])],
  controllers: [EnvironmentsController, EnvironmentDriftController],
  providers: [EnvironmentsService, EnvironmentsRepository],
  exports: [EnvironmentsService],
})
export class EnvironmentsModule {}
