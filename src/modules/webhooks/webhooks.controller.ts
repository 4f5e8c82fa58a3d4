import { Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { NotIdempotent } from '../../common/idempotency/not-idempotent.decorator';
import {
  fromResource,
  ProjectAccess,
  PROJECTS,
  ResourceRef,
} from '../../common/access/project-access';
import { CurrentAccess } from '../../common/auth/current-user.decorator';
import { PageSchema } from '../../common/pagination/page';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body, Query } from '../../common/validation/request-parts';
import {
  CreateWebhookDto,
  ListWebhookDeliveriesQueryDto,
  ListWebhooksQueryDto,
  UpdateWebhookDto,
  WebhookDeliveryDto,
  WebhookDto,
  WebhookWithSecretDto,
} from './dto/webhook.dto';
import {
  DEFAULT_WEBHOOK_MAX_ATTEMPTS,
  MAX_WEBHOOKS_PER_PROJECT,
  WEBHOOK_DELIVERY_RETENTION_DAYS,
  WEBHOOK_DISABLE_AFTER_FAILURES,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_TIMEOUT_MS,
} from './webhook-policy';
import { WebhooksService } from './webhooks.service';

const WEBHOOKS: ResourceRef = { table: 'webhooks', notFound: 'webhook_not_found', label: 'Webhook' };
const project = fromResource(PROJECTS);
const webhook = fromResource(WEBHOOKS);

const DELIVERY_RULES =
  `Each event is POSTed to every active subscription listening to it, on any instance, with a ` +
  `${WEBHOOK_TIMEOUT_MS / 1000} s timeout for the whole attempt, resolving the URL's host included ` +
  '(a host not resolved by then fails the attempt like an unreachable one); a 2xx ends it ' +
  '(redirects are not followed). Otherwise ' +
  `it is retried after 1 min, doubling, up to ${DEFAULT_WEBHOOK_MAX_ATTEMPTS} attempts ` +
  '(WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY_BASE_SECONDS). After ' +
  `${WEBHOOK_DISABLE_AFTER_FAILURES} consecutive failed attempts the subscription is disabled ` +
  '(`active: false`, `disabled_reason`). Headers (Standard Webhooks): `webhook-id` (the event id, ' +
  'the same on every attempt), `webhook-timestamp` (Unix seconds), `webhook-signature: ' +
  'v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` keyed with the ' +
  'base64-decoded part of the secret after `whsec_`. Event types: ' +
  WEBHOOK_EVENT_TYPES.map((t) => '`' + t + '`').join(', ') +
  '; body `{id, type, created_at, project_id, data}`.';

@ApiTags('webhooks')
@Controller()
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post('projects/:id/webhooks')
  @NotIdempotent() // the answer holds the new secret, which must never be stored in the clear
  @Transactional()
  @Endpoint({
    summary: 'Subscribe a URL to events of a project',
    description:
      `Answers the signing \`secret\` (only here and in rotate-secret). At most ${MAX_WEBHOOKS_PER_PROJECT} ` +
      'subscriptions per project (409 `webhook_limit_reached`). The URL\'s host is resolved here ' +
      `too, for at most ${WEBHOOK_TIMEOUT_MS / 1000} s: one that does not resolve in that time, or ` +
      'resolves to a loopback, private, link-local, multicast or unspecified address (unless ' +
      'WEBHOOK_ALLOW_PRIVATE), is 422 `webhook_url_not_allowed`. ' +
      DELIVERY_RULES,
    minRole: 'lead',
    project,
    status: 201,
    response: WebhookWithSecretDto,
    problems: ['webhook_url_not_allowed', 'webhook_limit_reached'],
  })
  create(
    @CurrentAccess() access: ProjectAccess,
    @Body() dto: CreateWebhookDto,
  ): Promise<WebhookWithSecretDto> {
    return this.webhooks.create(access, dto);
  }

  @Get('projects/:id/webhooks')
  @Endpoint({
    summary: "List a project's webhook subscriptions",
    description: 'Oldest first; ties broken by id. Secrets are never answered.',
    minRole: 'lead',
    project,
    response: { schema: PageSchema('WebhookDto') },
  })
  list(@CurrentAccess() access: ProjectAccess, @Query() q: ListWebhooksQueryDto) {
    return this.webhooks.list(access.projectId, q);
  }

  @Get('webhooks/:id')
  @Endpoint({ summary: 'Get a webhook subscription', minRole: 'lead', project: webhook, response: WebhookDto })
  get(@Param('id') id: string): Promise<WebhookDto> {
    return this.webhooks.get(id);
  }

  @Patch('webhooks/:id')
  @Transactional()
  @Endpoint({
    summary: 'Update a webhook subscription',
    description: '`active: true` turns a disabled subscription on again.',
    minRole: 'lead',
    project: webhook,
    response: WebhookDto,
    problems: ['webhook_url_not_allowed'],
  })
  update(@Param('id') id: string, @Body() dto: UpdateWebhookDto): Promise<WebhookDto> {
    return this.webhooks.update(id, dto);
  }

  @Delete('webhooks/:id')
  @Transactional()
  @Endpoint({
    summary: 'Delete a webhook subscription and its delivery log',
    minRole: 'lead',
    project: webhook,
    status: 204,
  })
  remove(@Param('id') id: string): Promise<void> {
    return this.webhooks.remove(id);
  }

  @Post('webhooks/:id/rotate-secret')
  @NotIdempotent() // as above; a replay would also answer a secret already replaced
  @Transactional()
  @Endpoint({
    summary: "Replace a subscription's signing secret",
    description: 'The new secret signs every attempt from now on (pending retries included); answered only here.',
    minRole: 'lead',
    project: webhook,
    response: WebhookWithSecretDto,
  })
  rotateSecret(@Param('id') id: string): Promise<WebhookWithSecretDto> {
    return this.webhooks.rotateSecret(id);
  }

  @Post('webhooks/:id/ping')
  @Transactional()
  @Endpoint({
    summary: 'Send a webhook.ping event to the subscription',
    description:
      'One attempt (no retries), sent even when the subscription is inactive; answers the pending attempt, whose outcome appears in the delivery log.',
    minRole: 'lead',
    project: webhook,
    status: 202,
    response: WebhookDeliveryDto,
  })
  ping(@CurrentAccess() access: ProjectAccess, @Param('id') id: string): Promise<WebhookDeliveryDto> {
    return this.webhooks.ping(access, id);
  }

  @Get('webhooks/:id/deliveries')
  @Endpoint({
    summary: "A subscription's delivery log",
    description: `One entry per attempt, newest first. Entries older than ${WEBHOOK_DELIVERY_RETENTION_DAYS} days are purged.`,
    minRole: 'lead',
    project: webhook,
    response: { schema: PageSchema('WebhookDeliveryDto') },
  })
  deliveries(@Param('id') id: string, @Query() q: ListWebhookDeliveriesQueryDto) {
    return this.webhooks.deliveries(id, q);
  }

  @Post('webhooks/:id/deliveries/:delivery_id/redeliver')
  @Transactional()
  @Endpoint({
    summary: 'Send the event of a delivery again now',
    description:
      'A new attempt of the same event (same `webhook-id`, freshly signed) in the log; one attempt, no automatic retries. Sent even when the subscription is inactive.',
    minRole: 'lead',
    project: webhook,
    status: 202,
    response: WebhookDeliveryDto,
    problems: ['webhook_delivery_not_found'],
  })
  redeliver(
    @CurrentAccess() access: ProjectAccess,
    @Param('id') id: string,
    @Param('delivery_id') deliveryId: string,
  ): Promise<WebhookDeliveryDto> {
    return this.webhooks.redeliver(access, id, deliveryId);
  }
}
