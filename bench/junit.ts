/** JUnit XML reports for the import scenarios, and their upload. */
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { once } from 'node:events';
import { request } from 'node:http';

/**
 * Writes a Maven/pytest-like report of `n` testcases: suites of 100 testcases, 90 % passed, 5 %
 * failures with a message and a stack trace, 2 % errors, 3 % skipped, some system-out, durations.
 * `family` makes classnames unique per report family, so a first import creates the cases and a
 * second import of the same family matches them. Testcases are named `<title>_<k>_works`: results
 * are matched by name across suites, so a report that must create its cases again needs a `title`
 * no other report used.
 */
export async function writeJunitReport(
  path: string,
  n: number,
  family: string,
  title = 'test_case',
): Promise<number> {
  const out = createWriteStream(path, { encoding: 'utf8' });
  const write = async (s: string) => {
    if (!out.write(s)) await once(out, 'drain');
  };
  const suites = Math.ceil(n / 100);
  await write(
    `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="bench-ci-${family}" tests="${n}">\n`,
  );
  let k = 0;
  for (let s = 0; s < suites; s++) {
    const module = `com.bench.${family}.module${s % 50}`;
    const count = Math.min(100, n - k);
    await write(
      `  <testsuite name="${module}.Suite${s}" tests="${count}" timestamp="2025-11-20T10:00:00Z">\n`,
    );
    await write(`    <properties><property name="ci.job" value="bench-${family}"/></properties>\n`);
    let chunk = '';
    for (let i = 0; i < count; i++, k++) {
      const cls = `${module}.Feature${s}Test`;
      const time = ((k % 997) / 331).toFixed(3);
      const h = k % 100;
      chunk += `    <testcase classname="${cls}" name="${title}_${k}_works" time="${time}">`;
      if (h < 5) {
        chunk +=
          `\n      <failure message="expected:&lt;200&gt; but was:&lt;500&gt;" type="java.lang.AssertionError">` +
          `java.lang.AssertionError: expected:&lt;200&gt; but was:&lt;500&gt;\n` +
          `\tat ${cls}.${title}_${k}_works(${cls.split('.').pop()}.java:${40 + (k % 50)})\n` +
          `\tat org.junit.runners.ParentRunner.run(ParentRunner.java:413)</failure>\n` +
          `      <system-out>GET /api/orders/${k} -&gt; 500 in 132 ms</system-out>\n    `;
      } else if (h < 7) {
        chunk += `\n      <error message="Connection reset" type="java.net.SocketException">java.net.SocketException: Connection reset</error>\n    `;
      } else if (h < 10) {
        chunk += `<skipped message="flaky on CI"/>`;
      }
      chunk += `</testcase>\n`;
    }
    await write(chunk);
    await write(`  </testsuite>\n`);
  }
  await write(`</testsuites>\n`);
  out.end();
  await once(out, 'finish');
  return out.bytesWritten;
}

export interface UploadResult {
  status: number;
  ms: number;
  body: unknown;
}

/**
 * POSTs the files as multipart parts `file` of one request (one import: issue #18 §2) with
 * node:http (no client-side timeout: a large import may take longer than fetch's default header
 * timeout).
 */
export async function uploadJunit(
  url: string,
  token: string,
  paths: string | string[],
): Promise<UploadResult> {
  const boundary = `----tms-bench-${Date.now().toString(16)}`;
  const parts: Buffer[] = [];
  for (const path of typeof paths === 'string' ? [paths] : paths) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${basename(path)}"\r\n` +
          `Content-Type: application/xml\r\n\r\n`,
      ),
      await readFile(path),
      Buffer.from('\r\n'),
    );
  }
  const head = Buffer.alloc(0);
  const data = Buffer.concat(parts);
  const tail = Buffer.from(`--${boundary}--\r\n`);
  const u = new URL(url);
  const t0 = performance.now();
  return new Promise<UploadResult>((resolve, reject) => {
    const req = request(
      {
        hostname: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': head.length + data.length + tail.length,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ms = Math.round(performance.now() - t0);
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // keep the text
          }
          resolve({ status: res.statusCode ?? 0, ms, body });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(0);
    req.on('error', reject);
    req.write(head);
    req.write(data);
    req.end(tail);
  });
}
