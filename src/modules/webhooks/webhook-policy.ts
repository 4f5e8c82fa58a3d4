/**
 * The event vocabulary and the delivery rules of webhooks (issue #20). Pure: no Nest, no database.
 */

/** Event types a subscription may list in `events`. */
export const WEBHOOK_EVENT_TYPES = [
  'test_run.created',
  'test_run.status_changed',
  'test_run.completed',
  'import.completed',
  'import.failed',
  'environment.revision_created',
  'test_case.created',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The event `POST /webhooks/{id}/ping` sends (to that subscription only; not subscribable). */
export const WEBHOOK_PING_EVENT = 'webhook.ping';

export const WEBHOOK_FORMATS = ['standard', 'slack'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/**
 * What made an attempt: the event itself (`event`), an automatic retry (`retry`), a
 * `POST …/redeliver` (`redeliver`) or a `POST …/ping` (`ping`).
 */
export const WEBHOOK_DELIVERY_TRIGGERS = ['event', 'retry', 'redeliver', 'ping'] as const;
export type WebhookDeliveryTrigger = (typeof WEBHOOK_DELIVERY_TRIGGERS)[number];

/** Most subscriptions of one project. */
export const MAX_WEBHOOKS_PER_PROJECT = 20;
/** Longest `description` of a subscription. */
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 1000;
/**
 * One attempt: resolving the host, the connection, request and response headers and the kept body,
 * at most this long in all. Also how long checking a URL on subscribe waits for its host to resolve.
 */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** Bytes of the receiver's response body kept in the delivery log. */
export const WEBHOOK_RESPONSE_BODY_BYTES = 1024;
/** Consecutive failed attempts after which a subscription is disabled. */
export const WEBHOOK_DISABLE_AFTER_FAILURES = 20;
/** Delivery log rows (and events no longer referenced) older than this are purged. */
export const WEBHOOK_DELIVERY_RETENTION_DAYS = 30;
/** Default WEBHOOK_MAX_ATTEMPTS: attempts of one event per subscription, the first included. */
export const DEFAULT_WEBHOOK_MAX_ATTEMPTS = 8;
/** Default WEBHOOK_RETRY_BASE_SECONDS: the wait before the first retry; it doubles each time. */
export const DEFAULT_WEBHOOK_RETRY_BASE_SECONDS = 60;

/** A 2xx answer ends the delivery; anything else (3xx included: redirects are not followed) fails. */
export function isDeliverySuccess(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}

/** Triggers of automatic attempts: the event's first attempt and its retries. */
export function isAutomatic(trigger: WebhookDeliveryTrigger): boolean {
  return trigger === 'event' || trigger === 'retry';
}

/**
 * Seconds to wait after the `automaticAttempts`-th automatic attempt (1-based) failed before the
 * next one: base, 2×base, 4×base, … (1 min doubling with the defaults).
 */
export function retryDelaySeconds(automaticAttempts: number, baseSeconds: number): number {
  return baseSeconds * 2 ** Math.max(0, automaticAttempts - 1);
}

/**
 * Whether a failed attempt is retried automatically: only attempts caused by the event (its first
 * attempt and the retries), while the subscription is active and automatic attempts remain
 * (`automaticAttempts`: those made so far, the failed one included; redeliveries and pings are
 * not counted, so they neither use up nor wait for the retries). Redeliveries and pings are one
 * attempt each.
 */
export function shouldRetry(input: {
  trigger: WebhookDeliveryTrigger;
  automaticAttempts: number;
  maxAttempts: number;
  active: boolean;
}): boolean {
  return isAutomatic(input.trigger) && input.active && input.automaticAttempts < input.maxAttempts;
}

/** The subscription's failure counter after an attempt, and whether it must now be disabled. */
export function afterAttempt(
  consecutiveFailures: number,
  succeeded: boolean,
): { consecutiveFailures: number; disable: boolean } {
  if (succeeded) return { consecutiveFailures: 0, disable: false };
  const next = consecutiveFailures + 1;
  return { consecutiveFailures: next, disable: next >= WEBHOOK_DISABLE_AFTER_FAILURES };
}

/** `disabled_reason` of a subscription disabled by {@link afterAttempt}. */
export const DISABLED_AFTER_FAILURES_REASON = `disabled after ${WEBHOOK_DISABLE_AFTER_FAILURES} consecutive failed deliveries`;
