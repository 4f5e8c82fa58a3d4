import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MilestoneEntity } from './entities/milestone.entity';
import { MilestonesController } from './milestones.controller';
import { MilestonesRepository } from './milestones.repository';
import { MilestonesService } from './milestones.service';

@Module({
  imports: [TypeOrmModule.forFeature([MilestoneEntity])],
  controllers: [MilestonesController],
  providers: [MilestonesService, MilestonesRepository],
  exports: [MilestonesService],
})
export class MilestonesModule {}
