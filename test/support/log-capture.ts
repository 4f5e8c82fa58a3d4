import { Writable } from 'node:stream';

/**
 * A log destination for `createTestApp(env, sink)` that keeps what the service writes, one entry per
 * non-empty line (pino writes JSON lines, sometimes several at once).
 */
export function logCapture(): { lines: string[]; sink: Writable } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, sink };
}
