import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SuiteEntity } from './entities/suite.entity';
import { SuitesController } from './suites.controller';
import { SuitesRepository } from './suites.repository';
import { SuitesService } from './suites.service';

@Module({
  imports: [TypeOrmModule.forFeature([SuiteEntity])],
  controllers: [SuitesController],
  providers: [SuitesService, SuitesRepository],
  exports: [SuitesService, SuitesRepository],
})
export class SuitesModule {}
