import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsNotEmpty,
  IsString,
} from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page';
import {
  MaxItems,
  MaxLen,
  NoNul,
  Nullable,
  OptionalNotNull,
} from '../../../common/validation/decorators';
import {
  MAX_WEBHOOK_DESCRIPTION_LENGTH,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_DELIVERY_TRIGGERS,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_FORMATS,
  WEBHOOK_RESPONSE_BODY_BYTES,
  type WebhookDeliveryStatus,
  type WebhookDeliveryTrigger,
  type WebhookEventType,
  type WebhookFormat,
} from '../webhook-policy';
import { MAX_WEBHOOK_URL_LENGTH } from '../webhook-url';

const URL_DESCRIPTION =
  'Where events are POSTed: an absolute `http://` or `https://` URL without credentials, at most ' +
  `${MAX_WEBHOOK_URL_LENGTH} characters. Its host must not be, nor resolve to, a loopback, private, ` +
  'link-local, multicast or unspecified address (422 `webhook_url_not_allowed`) unless the service ' +
  'runs with WEBHOOK_ALLOW_PRIVATE=true; checked again at each delivery. Redirects are not followed.';

const EVENTS_DESCRIPTION =
  'Event types to receive (at least one, no duplicates). `webhook.ping` is sent by ' +
  '`POST /webhooks/{id}/ping` whatever this list holds.';

const FORMAT_DESCRIPTION =
  '`standard`: the signed event body `{id, type, created_at, project_id, data}`. `slack`: a ' +
  'Slack-compatible `{text, blocks}` summary (run name, build, pass rate, failed count for run ' +
  'completion and imports; a one-line summary for other events), signed the same way.';

export class WebhookDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty({ example: 'https://ci.example.com/hooks/tms' }) url: string;
  @ApiProperty({ type: String, nullable: true, example: 'Nightly run notifications' })
  description: string | null;
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, isArray: true, example: ['test_run.completed'] })
  events: WebhookEventType[];
  @ApiProperty({ enum: WEBHOOK_FORMATS, description: FORMAT_DESCRIPTION }) format: WebhookFormat;
  @ApiProperty({
    description: 'Inactive subscriptions receive no events (pings and redeliveries are still sent)',
  })
  active: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'disabled after 20 consecutive failed deliveries',
    description: 'Why the service disabled the subscription; cleared when it is made active again',
  })
  disabled_reason: string | null;
  @ApiProperty({
    type: 'integer',
    description: 'Failed attempts since the last successful one (20 disable the subscription)',
  })
  consecutive_failures: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class WebhookWithSecretDto extends WebhookDto {
  @ApiProperty({
    example: 'whsec_<base64 of 32 random bytes>',
    description:
      'The signing secret, `whsec_` + base64 of 32 random bytes. Shown only in this response ' +
      '(create and rotate-secret); store it now. Verify `webhook-signature` with the HMAC-SHA256 ' +
      'key that is the base64-decoded part after `whsec_`.',
  })
  secret: string;
}

export class CreateWebhookDto {
  @ApiProperty({ description: URL_DESCRIPTION, example: 'https://ci.example.com/hooks/tms' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(MAX_WEBHOOK_URL_LENGTH)
  url: string;

  @ApiProperty({
    enum: WEBHOOK_EVENT_TYPES,
    isArray: true,
    description: EVENTS_DESCRIPTION,
    example: ['test_run.completed', 'import.completed'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @MaxItems(WEBHOOK_EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENT_TYPES, { each: true })
  events: WebhookEventType[];

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: MAX_WEBHOOK_DESCRIPTION_LENGTH })
  @Nullable()
  @IsString()
  @NoNul()
  @MaxLen(MAX_WEBHOOK_DESCRIPTION_LENGTH)
  description?: string | null;

  @ApiPropertyOptional({ default: true })
  @OptionalNotNull()
  @IsBoolean()
  active?: boolean;

  @ApiPropertyOptional({ enum: WEBHOOK_FORMATS, default: 'standard', description: FORMAT_DESCRIPTION })
  @OptionalNotNull()
  @IsIn(WEBHOOK_FORMATS)
  format?: WebhookFormat;
}

export class UpdateWebhookDto {
  @ApiPropertyOptional({ description: URL_DESCRIPTION })
  @OptionalNotNull()
  @IsString()
  @IsNotEmpty()
  @MaxLen(MAX_WEBHOOK_URL_LENGTH)
  url?: string;

  @ApiPropertyOptional({ enum: WEBHOOK_EVENT_TYPES, isArray: true, description: EVENTS_DESCRIPTION })
  @OptionalNotNull()
  @IsArray()
  @ArrayMinSize(1)
  @MaxItems(WEBHOOK_EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENT_TYPES, { each: true })
  events?: WebhookEventType[];

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: MAX_WEBHOOK_DESCRIPTION_LENGTH })
  @Nullable()
  @IsString()
  @NoNul()
  @MaxLen(MAX_WEBHOOK_DESCRIPTION_LENGTH)
  description?: string | null;

  @ApiPropertyOptional({
    description:
      '`true` turns a disabled subscription on again (clears `disabled_reason` and the failure count)',
  })
  @OptionalNotNull()
  @IsBoolean()
  active?: boolean;

  @ApiPropertyOptional({ enum: WEBHOOK_FORMATS, description: FORMAT_DESCRIPTION })
  @OptionalNotNull()
  @IsIn(WEBHOOK_FORMATS)
  format?: WebhookFormat;
}

export class ListWebhooksQueryDto extends PageQueryDto {}

export class ListWebhookDeliveriesQueryDto extends PageQueryDto {}

export class WebhookDeliveryDto {
  @ApiProperty({ format: 'uuid', description: 'The attempt' }) id: string;
  @ApiProperty({ format: 'uuid' }) webhook_id: string;
  @ApiProperty({
    format: 'uuid',
    description: 'The event: the `webhook-id` header and the body `id`, the same on every attempt',
  })
  event_id: string;
  @ApiProperty({ example: 'test_run.completed' }) event_type: string;
  @ApiProperty({
    type: 'integer',
    example: 1,
    description:
      'Attempt number of this event for this subscription, from 1: unique, and later attempts have ' +
      'higher numbers, whatever made them (retries and redeliveries share one sequence). ' +
      'WEBHOOK_MAX_ATTEMPTS counts automatic attempts only (`event` and `retry`): a redelivery ' +
      'neither uses up nor waits for the retries.',
  })
  attempt: number;
  @ApiProperty({ enum: WEBHOOK_DELIVERY_TRIGGERS }) trigger: WebhookDeliveryTrigger;
  @ApiProperty({
    enum: WEBHOOK_DELIVERY_STATUSES,
    description:
      '`pending`: waiting to be sent, or being sent. `succeeded`: the receiver answered 2xx. ' +
      '`failed`: any other answer, no answer (see `error`), or an attempt the service itself could ' +
      'not complete: when its job fails inside the service (a database error, a worker that ' +
      'stopped) and the job queue gives it up after its retries, the attempt ends `failed` with ' +
      '`response_status` null and `error` starting `not completed:` (the receiver may have ' +
      'received it), never `pending` for good. A failed attempt of an event is retried ' +
      'automatically while attempts remain; one the service could not complete does not count ' +
      'towards disabling the subscription.',
  })
  status: WebhookDeliveryStatus;
  @ApiProperty({ type: 'integer', nullable: true, example: 200 }) response_status: number | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: `The first ${WEBHOOK_RESPONSE_BODY_BYTES} bytes of the receiver's answer`,
  })
  response_body: string | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 42 }) duration_ms: number | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Why no answer arrived (refused destination, connection error, timeout), or why the service ' +
      'could not complete the attempt (`not completed: …`)',
  })
  error: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When a pending attempt is due, or when the retry of a failed one is scheduled',
  })
  next_attempt_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}
