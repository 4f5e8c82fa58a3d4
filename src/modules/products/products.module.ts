import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ComponentsModule } from '../components/components.module';
import { ProductComponentEntity } from './entities/product-component.entity';
import { ProductEntity } from './entities/product.entity';
import { PlanPreviewController } from './plan-preview.controller';
import { PlanPreviewRepository } from './plan-preview.repository';
import { PlanPreviewService } from './plan-preview.service';
import { ProductCoverageRepository } from './product-coverage.repository';
import { ProductsController } from './products.controller';
import { ProductsRepository } from './products.repository';
import { ProductsService } from './products.service';
import { ReadinessController } from './readiness.controller';

@Module({
  imports: [ComponentsModule, TypeOrmModule.forFeature([ProductEntity, ProductComponentEntity])],
  controllers: [ProductsController, PlanPreviewController, ReadinessController],
  providers: [
    ProductsService,
    ProductsRepository,
    ProductCoverageRepository,
    PlanPreviewService,
    PlanPreviewRepository,
  ],
  exports: [ProductsService, PlanPreviewService],
})
export class ProductsModule {}
