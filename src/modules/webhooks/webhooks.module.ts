import { Global, Module } from '@nestjs/common';
import { WebhookDeliveryWorker } from './webhook-delivery.worker';
import { WebhookEvents } from './webhook-events.service';
import { WebhookPurger } from './webhook-purger';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/**
 * Webhooks (issue #20): subscriptions, the outbox, deliveries and their log. Global so that any
 * feature may inject {@link WebhookEvents} to emit events; it depends on no feature module itself
 * (emitters pass the resource as `data`), so no module cycle can go through it.
 */
@Global()
@Module({
  controllers: [WebhooksController],
  providers: [WebhooksRepository, WebhookEvents, WebhooksService, WebhookDeliveryWorker, WebhookPurger],
  exports: [WebhookEvents],
})
export class WebhooksModule {}
