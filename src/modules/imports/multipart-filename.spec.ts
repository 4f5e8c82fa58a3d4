import { Readable } from 'node:stream';
import { addMissingFilename } from './multipart-filename';

async function run(body: string, chunk: number): Promise<string> {
  const parts: Buffer[] = [];
  const src = Buffer.from(body, 'latin1');
  const chunks: Buffer[] = [];
  for (let i = 0; i < src.length; i += chunk) chunks.push(src.subarray(i, i + chunk));
  const out = Readable.from(chunks).pipe(addMissingFilename('XyZ', 'file', 'junit.xml'));
  for await (const c of out) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('latin1');
}

const body = (disposition: string, content = '<testsuite/>') =>
  `--XyZ\r\nContent-Disposition: form-data; name="dry_run"\r\n\r\ntrue\r\n` +
  `--XyZ\r\n${disposition}\r\nContent-Type: application/octet-stream\r\n\r\n${content}\r\n--XyZ--\r\n`;

describe('addMissingFilename', () => {
  it.each([1, 2, 3, 7, 64, 4096])(
    'adds a filename to the nameless `file` part (chunks of %i bytes)',
    async (n) => {
      const out = await run(body('Content-Disposition: form-data; name="file"'), n);
      expect(out).toBe(body('Content-Disposition: form-data; name="file"; filename="junit.xml"'));
    },
  );

  it.each([
    ['filename=""', 'Content-Disposition: form-data; name="file"; filename=""'],
    ['an empty filename*', 'Content-Disposition: form-data; name="file"; filename*=UTF-8\'\''],
    [
      'both empty',
      'Content-Disposition: form-data; name="file"; filename=""; filename*=utf-8\'en\'',
    ],
  ])('treats %s as no name (multer would drop the part)', async (_name, d) => {
    expect(await run(body(d), 4)).toBe(
      body('Content-Disposition: form-data; name="file"; filename="junit.xml"'),
    );
  });

  it.each([
    'Content-Disposition: form-data; name="file"; filename="r.xml"',
    'Content-Disposition: form-data; name="other"',
    'Content-Disposition: form-data; name="file"; filename*=UTF-8\'\'r.xml',
  ])('leaves %s alone', async (d) => {
    expect(await run(body(d), 5)).toBe(body(d));
  });

  it('drops an empty filename beside a non-empty filename*', async () => {
    const out = await run(
      body('Content-Disposition: form-data; name="file"; filename=""; filename*=UTF-8\'\'r.xml'),
      6,
    );
    expect(out).toBe(body('Content-Disposition: form-data; name="file"; filename*=UTF-8\'\'r.xml'));
  });

  it('never touches part contents, even when they look like headers', async () => {
    const content = 'Content-Disposition: form-data; name="file"\r\n\r\n<x/>';
    const out = await run(
      body('Content-Disposition: form-data; name="file"; filename="a.xml"', content),
      3,
    );
    expect(out).toBe(
      body('Content-Disposition: form-data; name="file"; filename="a.xml"', content),
    );
  });
});
