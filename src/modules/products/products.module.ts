import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ComponentsModule } from '../components/components.module';
import { ProductComponentEntity } from './entities/product-component.entity';
import { ProductEntity } from './entities/product.entity';
import { PlanPreviewController } from './plan-preview.controller';
import { PlanPreviewService } from './plan-preview.service';
import { ProductCoverageRepository } from './product-coverage.repository';
import { ProductsController } from './products.controller';
import { ProductsService } from './products.service';

@Module({
  imports: [ComponentsModule, TypeOrmModule.forFeature([ProductEntity, ProductComponentEntity])],
  controllers: [ProductsController, PlanPreviewController],
  providers: [ProductsService, ProductCoverageRepository, PlanPreviewService],
  exports: [ProductsService, PlanPreviewService],
})
export class ProductsModule {}
