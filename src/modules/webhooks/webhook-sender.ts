import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  DestinationRefused,
  parseWebhookUrl,
  resolveAllowed,
  type ResolvedAddress,
  type Resolver,
} from './webhook-url';

/** The outcome of one HTTP attempt. */
export interface SendResult {
  /** The receiver's status, or null when no answer arrived (refused, unreachable, timed out). */
  status: number | null;
  /** The first bytes of the answer's body (UTF-8, NUL characters removed), or null. */
  body: string | null;
  durationMs: number;
  /** Why no answer was received, or null. */
  error: string | null;
}

export interface SendOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  maxBodyBytes: number;
  resolver?: Resolver;
}

/**
 * A `lookup` for the request's socket that answers only the addresses checked before: the
 * connection goes to an address that passed the SSRF check, whatever the DNS says a moment later
 * (no DNS rebinding between check and connect).
 */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, addresses.map((a) => ({ address: a.address, family: a.family })));
    else callback(null, addresses[0].address, addresses[0].family);
  }) as unknown as LookupFunction;
}

/**
 * POSTs `body` to `rawUrl` once: the destination is checked again at delivery time (SSRF, DNS
 * rebinding), redirects are not followed (a 3xx is the answer), the whole attempt, resolving the
 * host included, is bounded by `timeoutMs` (a resolver that has not answered by then fails the
 * attempt, as `destination refused: the host … does not resolve (no answer within … ms)`), and at
 * most `maxBodyBytes` of the answer are read. Never throws.
 */
export async function sendWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const target = parseWebhookUrl(rawUrl);
  if ('problem' in target) {
    return { status: null, body: null, durationMs: elapsed(), error: `URL refused: ${target.problem}` };
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolveAllowed(target.host, options.allowPrivate, {
      timeoutMs: options.timeoutMs,
      resolver: options.resolver,
    });
  } catch (error) {
    const message = error instanceof DestinationRefused ? error.message : String(error);
    return { status: null, body: null, durationMs: elapsed(), error: `destination refused: ${message}` };
  }
  const payload = Buffer.from(body, 'utf8');
  // The request has what the lookup left of the attempt's time.
  const remainingMs = Math.max(0, options.timeoutMs - (performance.now() - started));
  return new Promise<SendResult>((resolve) => {
    let done = false;
    const finish = (result: Omit<SendResult, 'durationMs'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    // Set once the receiver's status line arrived: from then on the attempt has an answer, and the
    // deadline only ends the reading of its body (a 2xx whose body stalls is still a 2xx).
    let answered: (() => void) | null = null;
    const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      target.url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(payload.length) },
        lookup: pinnedLookup(addresses),
        // A fresh connection per attempt: no pooled socket to an address checked earlier.
        agent: false,
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const answer = () => {
          const text = Buffer.concat(chunks).subarray(0, options.maxBodyBytes).toString('utf8');
          finish({ status: res.statusCode ?? null, body: text.replace(/\0/g, ''), error: null });
          res.destroy();
        };
        answered = answer;
        res.on('data', (chunk: Buffer) => {
          if (kept >= options.maxBodyBytes) return;
          chunks.push(chunk);
          kept += chunk.length;
          if (kept >= options.maxBodyBytes) answer();
        });
        res.on('end', answer);
        res.on('error', answer);
        res.on('close', answer);
      },
    );
    const timer = setTimeout(() => {
      if (answered !== null) answered();
      else req.destroy(new Error(`no answer within ${options.timeoutMs} ms`));
    }, remainingMs);
    req.on('error', (error: Error) => {
      if (answered !== null) answered();
      else finish({ status: null, body: null, error: error.message || String(error) });
    });
    req.end(payload);
  });
}
