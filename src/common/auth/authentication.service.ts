import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { AppException } from '../errors/app-exception';
import { apiKeyMatches, apiKeyPrefix, looksLikeApiKey } from './api-key';
import { AuthenticatedUser } from './authenticated-user';
import { CredentialsRepository, CredentialUserRow } from './credentials.repository';
import { TokenClaims, verifyAccessToken } from './tokens';

/**
 * Resolves the caller from `X-API-Key: <API key>` or `Authorization: Bearer <access token | API key>`.
 * Failures are 401 problems with the CONTRACT §3 codes; secrets are never logged or echoed.
 */
@Injectable()
export class AuthenticationService {
  constructor(
    private readonly credentials: CredentialsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async authenticate(req: Request): Promise<AuthenticatedUser> {
    const credential = extractCredential(req);
    if (!credential)
      throw new AppException('unauthorized', 'A bearer token or API key is required');
    if (credential.apiKeyHeader || looksLikeApiKey(credential.value))
      return this.byApiKey(credential.value);
    return this.byToken(credential.value);
  }

  private async byToken(token: string): Promise<AuthenticatedUser> {
    const check = verifyAccessToken(token, this.config.authSecret);
    if (!check.ok) {
      throw new AppException(
        check.reason,
        check.reason === 'token_expired'
          ? 'The access token has expired'
          : 'The access token is invalid',
      );
    }
    return this.userOfToken(await this.credentials.userById(check.claims.sub), check.claims);
  }

  /**
   * The claims of the request's bearer access token when it carries one that verifies (signature,
   * expiry, times), else null: no credential, an API key, a malformed header or a bad token, which
   * {@link authenticate} answers with their 401. Reads nothing from the database: the caller reads
   * the user with its own statement and hands the row to {@link userOfToken}.
   */
  verifiedTokenClaims(req: Request): TokenClaims | null {
    let credential: ReturnType<typeof extractCredential>;
    try {
      credential = extractCredential(req);
    } catch {
      return null; // a malformed Authorization header: authenticate() answers it
    }
    if (!credential || credential.apiKeyHeader || looksLikeApiKey(credential.value)) return null;
    const check = verifyAccessToken(credential.value, this.config.authSecret);
    return check.ok ? check.claims : null;
  }

  /** The caller of verified token `claims`, from its user row (401 when unknown, disabled or revoked). */
  userOfToken(u: CredentialUserRow | undefined, claims: TokenClaims): AuthenticatedUser {
    if (!u) throw new AppException('invalid_token', 'The access token is invalid');
    if (!u.is_active) throw new AppException('user_disabled', 'The user account is disabled');
    if (u.token_version !== claims.ver) {
      throw new AppException('token_revoked', 'The access token was revoked; sign in again');
    }
    return {
      id: u.id,
      username: u.username,
      displayName: u.display_name,
      isAdmin: u.is_admin,
      via: 'token',
    };
  }

  private async byApiKey(key: string): Promise<AuthenticatedUser> {
    const prefix = apiKeyPrefix(key);
    if (!prefix) throw new AppException('invalid_api_key', 'The API key is invalid');
    const r = await this.credentials.apiKeyByPrefix(prefix);
    if (!r || !apiKeyMatches(key, r.key_hash) || r.expired) {
      throw new AppException('invalid_api_key', 'The API key is invalid, expired or revoked');
    }
    if (!r.is_active) throw new AppException('user_disabled', 'The user account is disabled');
    if (r.stale) {
      // Throttled to one write a minute per key so that hot API-key traffic is not a write per request.
      await this.credentials.touchApiKey(r.key_id);
    }
    return {
      id: r.id,
      username: r.username,
      displayName: r.display_name,
      isAdmin: r.is_admin,
      via: 'api_key',
    };
  }
}

/**
 * The credential of a request. `X-API-Key` wins over `Authorization` (reference
 * products-auth-errors.md §3.4): when it is sent, its value is taken as an API key whatever it looks
 * like, and a bad one fails the request even beside a valid bearer token.
 */
function extractCredential(req: Request): { value: string; apiKeyHeader: boolean } | null {
  const apiKey = req.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '')
    return { value: apiKey.trim(), apiKeyHeader: true };
  const header = req.headers.authorization;
  if (typeof header === 'string' && header.trim() !== '') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
    if (!m)
      throw new AppException(
        'invalid_token',
        'The Authorization header must use the Bearer scheme',
      );
    return { value: m[1], apiKeyHeader: false };
  }
  return null;
}
