import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, logFormatOf } from './config';

/** LOG_FORMAT (issue #24 §3): JSON lines by default, pino-pretty for a human at a terminal. */
describe('LOG_FORMAT', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cfg-log-'));

  it.each([
    [undefined, 'json'],
    ['', 'json'],
    ['  ', 'json'],
    ['json', 'json'],
    ['pretty', 'pretty'],
    ['PRETTY', 'pretty'],
    [' Json ', 'json'],
  ])('LOG_FORMAT=%j gives %s', (value, expected) => {
    expect(logFormatOf({ LOG_FORMAT: value })).toBe(expected);
    expect(loadConfig({ DATA_DIR: dir, LOG_FORMAT: value }).logFormat).toBe(expected);
  });

  it.each(['text', 'pino', 'pretty-json', 'ndjson'])('refuses LOG_FORMAT=%s naming the variable and the values', (value) => {
    expect(() => loadConfig({ DATA_DIR: dir, LOG_FORMAT: value })).toThrow(ConfigError);
    expect(() => logFormatOf({ LOG_FORMAT: value })).toThrow(
      `LOG_FORMAT must be one of json, pretty, got "${value}"`,
    );
  });
});
