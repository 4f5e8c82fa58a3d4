import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { ProjectAccess } from '../../common/access/project-access';
import { AppException } from '../../common/errors/app-exception';
import { offsetOf, Page, pageOf } from '../../common/pagination/page';
import { isUuid, uuidv7 } from '../../common/persistence/ids';
import {
  CreateWebhookDto,
  ListWebhookDeliveriesQueryDto,
  ListWebhooksQueryDto,
  UpdateWebhookDto,
  WebhookDeliveryDto,
  WebhookDto,
  WebhookWithSecretDto,
} from './dto/webhook.dto';
import { WebhookEvents } from './webhook-events.service';
import { MAX_WEBHOOKS_PER_PROJECT, WEBHOOK_TIMEOUT_MS, type WebhookEventType } from './webhook-policy';
import { encryptSecret, generateWebhookSecret, secretEncryptionKey } from './webhook-secret';
import { DestinationRefused, parseWebhookUrl, resolveAllowed } from './webhook-url';
import { DeliveryRow, WebhookRow, WebhooksRepository } from './webhooks.repository';

/**
 * Webhook subscriptions and their delivery log (issue #20). The signing secret is generated here,
 * answered once (create, rotate-secret) and stored encrypted; it never reaches a log line.
 */
@Injectable()
export class WebhooksService {
  private readonly key: Buffer;

  constructor(
    private readonly repo: WebhooksRepository,
    private readonly events: WebhookEvents,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.key = secretEncryptionKey(config.authSecret);
  }

  async create(access: ProjectAccess, dto: CreateWebhookDto): Promise<WebhookWithSecretDto> {
    const url = await this.checkUrl(dto.url);
    await this.repo.lockProject(access.projectId);
    if ((await this.repo.countInProject(access.projectId)) >= MAX_WEBHOOKS_PER_PROJECT) {
      throw new AppException(
        'webhook_limit_reached',
        `A project has at most ${MAX_WEBHOOKS_PER_PROJECT} webhook subscriptions`,
      );
    }
    const id = uuidv7();
    const secret = generateWebhookSecret();
    await this.repo.insert({
      id,
      projectId: access.projectId,
      url,
      description: dto.description ?? null,
      events: dto.events,
      format: dto.format ?? 'standard',
      active: dto.active ?? true,
      secretCiphertext: encryptSecret(this.key, id, secret),
    });
    return { ...(await this.get(id)), secret };
  }

  async list(projectId: string, q: ListWebhooksQueryDto): Promise<Page<WebhookDto>> {
    const { rows, total } = await this.repo.page(
      projectId,
      offsetOf(q.page, q.page_size),
      q.page_size,
    );
    return pageOf(rows.map(toWebhookDto), q.page, q.page_size, total);
  }

  async get(id: string): Promise<WebhookDto> {
    const row = await this.repo.findById(id);
    if (row === null) throw AppException.notFound('webhook_not_found', 'Webhook');
    return toWebhookDto(row);
  }

  async update(id: string, dto: UpdateWebhookDto): Promise<WebhookDto> {
    const current = await this.repo.findByIdForUpdate(id);
    if (current === null) throw AppException.notFound('webhook_not_found', 'Webhook');
    const url = dto.url !== undefined ? await this.checkUrl(dto.url) : undefined;
    await this.repo.update(id, {
      url,
      description: dto.description,
      events: dto.events,
      format: dto.format,
      active: dto.active,
    });
    return this.get(id);
  }

  async remove(id: string): Promise<void> {
    await this.repo.delete(id);
  }

  /** A new secret replaces the old one at once; answered this once. */
  async rotateSecret(id: string): Promise<WebhookWithSecretDto> {
    const current = await this.repo.findByIdForUpdate(id);
    if (current === null) throw AppException.notFound('webhook_not_found', 'Webhook');
    const secret = generateWebhookSecret();
    await this.repo.setSecret(id, encryptSecret(this.key, id, secret));
    return { ...(await this.get(id)), secret };
  }

  /** Sends a `webhook.ping` event to this subscription; answers its pending attempt. */
  async ping(access: ProjectAccess, id: string): Promise<WebhookDeliveryDto> {
    const attemptId = await this.events.ping(access.projectId, id);
    return this.attempt(id, attemptId);
  }

  async deliveries(
    id: string,
    q: ListWebhookDeliveriesQueryDto,
  ): Promise<Page<WebhookDeliveryDto>> {
    const { rows, total } = await this.repo.deliveriesPage(
      id,
      offsetOf(q.page, q.page_size),
      q.page_size,
    );
    return pageOf(rows.map(toDeliveryDto), q.page, q.page_size, total);
  }

  /**
   * Sends the event of `deliveryId` again now: a new attempt in the log (no automatic retries). Its
   * number is taken under the subscription's row lock, as the delivery worker takes a retry's, so
   * the two never share one.
   */
  async redeliver(
    access: ProjectAccess,
    id: string,
    deliveryId: string,
  ): Promise<WebhookDeliveryDto> {
    if ((await this.repo.findByIdForUpdate(id)) === null) {
      throw AppException.notFound('webhook_not_found', 'Webhook');
    }
    const source = isUuid(deliveryId) ? await this.repo.findDelivery(id, deliveryId) : null;
    if (source === null) {
      throw AppException.notFound('webhook_delivery_not_found', 'Webhook delivery');
    }
    const attemptId = uuidv7();
    const { attempt } = await this.repo.nextAttempt(id, source.event_id);
    await this.events.enqueue([
      {
        id: attemptId,
        projectId: access.projectId,
        webhookId: id,
        eventId: source.event_id,
        attempt,
        trigger: 'redeliver',
        nextAttemptAt: new Date(),
      },
    ]);
    return this.attempt(id, attemptId);
  }

  private async attempt(webhookId: string, attemptId: string): Promise<WebhookDeliveryDto> {
    const row = await this.repo.findDelivery(webhookId, attemptId);
    if (row === null) throw AppException.notFound('webhook_delivery_not_found', 'Webhook delivery');
    return toDeliveryDto(row);
  }

  /**
   * The URL as stored, after its shape (422 validation_error on `url`) and its destination (422
   * `webhook_url_not_allowed`) were checked.
   */
  private async checkUrl(raw: string): Promise<string> {
    const target = parseWebhookUrl(raw);
    if ('problem' in target) throw AppException.validation({ url: [`url ${target.problem}`] });
    try {
      await resolveAllowed(target.host, this.config.webhooks.allowPrivate, {
        timeoutMs: WEBHOOK_TIMEOUT_MS,
      });
    } catch (error) {
      if (error instanceof DestinationRefused) {
        throw new AppException('webhook_url_not_allowed', `The webhook URL is not allowed: ${error.message}`);
      }
      throw error;
    }
    return target.url.toString();
  }
}

export function toWebhookDto(r: WebhookRow): WebhookDto {
  return {
    id: r.id,
    project_id: r.project_id,
    url: r.url,
    description: r.description,
    events: r.events as WebhookEventType[],
    format: r.format,
    active: r.active,
    disabled_reason: r.disabled_reason,
    consecutive_failures: r.consecutive_failures,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

export function toDeliveryDto(r: DeliveryRow): WebhookDeliveryDto {
  return {
    id: r.id,
    webhook_id: r.webhook_id,
    event_id: r.event_id,
    event_type: r.event_type,
    attempt: r.attempt,
    trigger: r.trigger,
    status: r.status,
    response_status: r.response_status,
    response_body: r.response_body,
    duration_ms: r.duration_ms,
    error: r.error,
    next_attempt_at: r.next_attempt_at === null ? null : r.next_attempt_at.toISOString(),
    created_at: r.created_at.toISOString(),
  };
}
