import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { DeadlineExceeded, withDeadline } from '../../common/deadline';
import { blockedAddressKind } from './webhook-address';

/** Longest accepted webhook URL, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** A parsed, acceptable webhook URL: its host as a name or a bare IP address (no brackets). */
export interface WebhookTarget {
  url: URL;
  host: string;
}

/**
 * The shape of a webhook URL (pure): absolute `http://` or `https://`, a host, no credentials.
 * Returns the target, or the reason it is refused (a validation message for `url`).
 */
export function parseWebhookUrl(raw: string): WebhookTarget | { problem: string } {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) {
    return { problem: `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters` };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'must be an absolute http:// or https:// URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { problem: 'must be an http:// or https:// URL' };
  }
  if (url.hostname === '') return { problem: 'must name a host' };
  if (url.username !== '' || url.password !== '') {
    return { problem: 'must not contain credentials (the signature authenticates the sender)' };
  }
  // The URL is stored (and checked again at each delivery) as normalised: `é` becomes `%C3%A9`.
  if (url.toString().length > MAX_WEBHOOK_URL_LENGTH) {
    return {
      problem: `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters once normalised (a character other than ASCII counts as its %-escapes)`,
    };
  }
  const host =
    url.hostname.startsWith('[') && url.hostname.endsWith(']')
      ? url.hostname.slice(1, -1)
      : url.hostname;
  return { url, host };
}

/** A resolved address of a webhook host. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

/** Every address of `host` (node:dns lookup, all of them, in the resolver's order). */
export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses: LookupAddress[]) => {
      if (error) reject(error);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

/** Why a destination is refused (`webhook_url_not_allowed`), thrown by {@link resolveAllowed}. */
export class DestinationRefused extends Error {}

/** How {@link resolveAllowed} resolves a name, and for how long it waits. */
export interface ResolveOptions {
  /**
   * The resolver has this long to answer; then the host counts as not resolving. node's lookup
   * cannot be cancelled: a late answer is ignored.
   */
  timeoutMs: number;
  resolver?: Resolver;
}

/**
 * The addresses a delivery to `host` may connect to: an IP literal as is, a name through
 * `resolver`. Unless `allowPrivate`, any loopback, private, link-local, multicast or unspecified
 * address among them refuses the whole host (a name resolving to one public and one private
 * address could otherwise be pointed at either). A name that does not resolve is refused too, and
 * so is one whose resolver has not answered within `timeoutMs` (a hanging resolver would otherwise
 * hold a delivery job, or a request, forever).
 */
export async function resolveAllowed(
  host: string,
  allowPrivate: boolean,
  { timeoutMs, resolver = systemResolver }: ResolveOptions,
): Promise<ResolvedAddress[]> {
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await withDeadline(resolver(host), timeoutMs);
    } catch (error) {
      const reason =
        error instanceof DeadlineExceeded
          ? `no answer within ${timeoutMs} ms`
          : ((error as NodeJS.ErrnoException).code ?? 'error');
      throw new DestinationRefused(`the host ${host} does not resolve (${reason})`);
    }
    if (addresses.length === 0) throw new DestinationRefused(`the host ${host} has no address`);
  }
  if (!allowPrivate) {
    for (const a of addresses) {
      const kind = blockedAddressKind(a.address);
      if (kind !== null) {
        throw new DestinationRefused(
          `the host ${host} resolves to ${a.address}, a ${kind} address; webhooks are not sent to ` +
            'loopback, private, link-local, multicast or unspecified addresses',
        );
      }
    }
  }
  return addresses;
}
