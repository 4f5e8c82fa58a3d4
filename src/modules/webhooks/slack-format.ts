/**
 * The `format: "slack"` body (issue #20): a Slack-compatible `{text, blocks}` message instead of
 * the standard event body. Link-free: names, build, pass rate and counts only. Pure.
 */

/** The standard event body, as stored in the outbox. */
export interface WebhookEventBody {
  id: string;
  type: string;
  created_at: string;
  project_id: string;
  data: Record<string, unknown>;
}

export interface SlackMessage {
  text: string;
  blocks: Array<Record<string, unknown>>;
}

function str(v: unknown, fallback = ''): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : fallback;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** Slack's mrkdwn escapes: `&`, `<` and `>` (so names cannot inject links or mentions). */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function runLine(run: Record<string, unknown>): string[] {
  const summary = obj(run.summary);
  const failed = num(summary.failure) + num(summary.error);
  const lines = [`*${slackEscape(str(run.name, 'Test run'))}*`];
  if (typeof run.build === 'string' && run.build !== '') lines.push(`Build: ${slackEscape(run.build)}`);
  lines.push(
    `Pass rate: ${num(summary.pass_rate)}% (${num(summary.passed)} passed of ${num(summary.total)})`,
    `Failed: ${failed}`,
  );
  return lines;
}

function importLines(data: Record<string, unknown>): string[] {
  const target = obj(data.target_run);
  const statuses = obj(data.statuses);
  const passed = num(statuses.passed);
  const failed = num(statuses.failure) + num(statuses.error);
  const total = Object.values(statuses).reduce<number>((n, v) => n + num(v), 0);
  const rate = total === 0 ? 0 : Math.round((passed / total) * 10000) / 100;
  const lines = [`*${slackEscape(str(target.name, str(data.source_filename, 'Import')))}*`];
  if (typeof data.build === 'string' && data.build !== '') lines.push(`Build: ${slackEscape(data.build)}`);
  lines.push(`Pass rate: ${rate}% (${passed} passed of ${total})`, `Failed: ${failed}`);
  return lines;
}

/** The message's headline and detail lines for an event. */
function describe(event: WebhookEventBody): { title: string; lines: string[] } {
  const data = event.data;
  switch (event.type) {
    case 'test_run.completed':
      return { title: 'Test run completed', lines: runLine(data) };
    case 'test_run.created':
      return { title: 'Test run created', lines: [`*${slackEscape(str(data.name, 'Test run'))}*`] };
    case 'test_run.status_changed':
      return {
        title: 'Test run status changed',
        lines: [
          `*${slackEscape(str(data.name, 'Test run'))}*`,
          `${slackEscape(str(data.from))} → ${slackEscape(str(data.to))}`,
        ],
      };
    case 'import.completed':
      return { title: 'Import completed', lines: importLines(data) };
    case 'import.failed':
      return {
        title: 'Import failed',
        lines: [
          `*${slackEscape(str(data.source_filename, 'Import'))}*`,
          slackEscape(str(data.error, str(data.detail, 'The import failed'))),
        ],
      };
    case 'environment.revision_created':
      return {
        title: 'Environment revision created',
        lines: [
          `*${slackEscape(str(data.environment_name, 'Environment'))}* revision ${num(data.revision_number)}`,
        ],
      };
    case 'test_case.created':
      return {
        title: 'Test case created',
        lines: [`*${slackEscape(str(data.key))}* ${slackEscape(str(data.title))}`.trim()],
      };
    case 'webhook.ping':
      return { title: 'Webhook ping', lines: ['This subscription can reach you.'] };
    default:
      return { title: slackEscape(event.type), lines: [] };
  }
}

/** The Slack message for an event. */
export function slackMessage(event: WebhookEventBody): SlackMessage {
  const { title, lines } = describe(event);
  const text = [title, ...lines].join('\n');
  return {
    text,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: title } },
      ...(lines.length > 0
        ? [{ type: 'section', text: { type: 'mrkdwn', text: lines.join('\n') } }]
        : []),
    ],
  };
}
