import { slackMessage, type WebhookEventBody } from './slack-format';

const event = (type: string, data: Record<string, unknown>): WebhookEventBody => ({
  id: 'e1',
  type,
  created_at: '2026-01-01T00:00:00.000Z',
  project_id: 'p1',
  data,
});

describe('slackMessage', () => {
  it('summarises a completed run: name, build, pass rate, failed count', () => {
    const m = slackMessage(
      event('test_run.completed', {
        name: 'Nightly <main>',
        build: '1.2.3',
        summary: { total: 4, passed: 2, failure: 1, error: 1, pass_rate: 50 },
      }),
    );
    expect(m.text).toBe('Test run completed\n*Nightly &lt;main&gt;*\nBuild: 1.2.3\nPass rate: 50% (2 passed of 4)\nFailed: 2');
    expect(m.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Test run completed' } });
    expect(JSON.stringify(m)).not.toMatch(/https?:/);
  });

  it('summarises an import from its status counts', () => {
    const m = slackMessage(
      event('import.completed', {
        target_run: { name: 'CI' },
        statuses: { passed: 3, failure: 1, error: 0, skipped: 0 },
      }),
    );
    expect(m.text).toBe('Import completed\n*CI*\nPass rate: 75% (3 passed of 4)\nFailed: 1');
  });

  it.each([
    ['test_run.created', { name: 'R' }, 'Test run created\n*R*'],
    ['test_run.status_changed', { name: 'R', from: 'not_started', to: 'in_progress' }, 'Test run status changed\n*R*\nnot_started → in_progress'],
    ['webhook.ping', {}, 'Webhook ping\nThis subscription can reach you.'],
    ['import.failed', { source_filename: 'a.xml', error: 'bad' }, 'Import failed\n*a.xml*\nbad'],
  ])('%s', (type, data, text) => {
    expect(slackMessage(event(type, data)).text).toBe(text);
  });
});
