import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { AppException } from '../errors/app-exception';
import { Db } from '../persistence/db.service';
import { apiKeyMatches, apiKeyPrefix, looksLikeApiKey } from './api-key';
import { AuthenticatedUser } from './authenticated-user';
import { verifyAccessToken } from './tokens';

interface UserRow {
  id: string;
  username: string;
  display_name: string | null;
  is_admin: boolean;
  is_active: boolean;
  token_version: number;
}

/**
 * Resolves the caller from `X-API-Key: <API key>` or `Authorization: Bearer <access token | API key>`.
 * Failures are 401 problems with the CONTRACT §3 codes; secrets are never logged or echoed.
 */
@Injectable()
export class AuthenticationService {
  constructor(
    private readonly db: Db,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async authenticate(req: Request): Promise<AuthenticatedUser> {
    const credential = extractCredential(req);
    if (!credential) throw new AppException('unauthorized', 'A bearer token or API key is required');
    if (credential.apiKeyHeader || looksLikeApiKey(credential.value)) return this.byApiKey(credential.value);
    return this.byToken(credential.value);
  }

  private async byToken(token: string): Promise<AuthenticatedUser> {
    const check = verifyAccessToken(token, this.config.authSecret);
    if (!check.ok) {
      throw new AppException(
        check.reason,
        check.reason === 'token_expired' ? 'The access token has expired' : 'The access token is invalid',
      );
    }
    const rows = await this.db.prepared<UserRow>(
      'auth.user',
      'SELECT id, username, display_name, is_admin, is_active, token_version FROM users WHERE id = $1',
      [check.claims.sub],
    );
    const u = rows[0];
    if (!u) throw new AppException('invalid_token', 'The access token is invalid');
    if (!u.is_active) throw new AppException('user_disabled', 'The user account is disabled');
    if (u.token_version !== check.claims.ver) {
      throw new AppException('token_revoked', 'The access token was revoked; sign in again');
    }
    return { id: u.id, username: u.username, displayName: u.display_name, isAdmin: u.is_admin, via: 'token' };
  }

  private async byApiKey(key: string): Promise<AuthenticatedUser> {
    const prefix = apiKeyPrefix(key);
    if (!prefix) throw new AppException('invalid_api_key', 'The API key is invalid');
    const rows = await this.db.prepared<
      UserRow & { key_id: string; key_hash: string; expired: boolean; stale: boolean }
    >(
      'auth.api-key',
      `SELECT u.id, u.username, u.display_name, u.is_admin, u.is_active, u.token_version,
              k.id AS key_id, k.key_hash,
              (k.expires_at IS NOT NULL AND k.expires_at <= now()) AS expired,
              (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') AS stale
         FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.prefix = $1`,
      [prefix],
    );
    const r = rows[0];
    if (!r || !apiKeyMatches(key, r.key_hash) || r.expired) {
      throw new AppException('invalid_api_key', 'The API key is invalid, expired or revoked');
    }
    if (!r.is_active) throw new AppException('user_disabled', 'The user account is disabled');
    if (r.stale) {
      // Throttled to one write a minute per key so that hot API-key traffic is not a write per request.
      await this.db.dataSource.query('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [r.key_id]);
    }
    return { id: r.id, username: r.username, displayName: r.display_name, isAdmin: r.is_admin, via: 'api_key' };
  }
}

/**
 * The credential of a request. `X-API-Key` wins over `Authorization` (reference
 * products-auth-errors.md §3.4): when it is sent, its value is taken as an API key whatever it looks
 * like, and a bad one fails the request even beside a valid bearer token.
 */
function extractCredential(req: Request): { value: string; apiKeyHeader: boolean } | null {
  const apiKey = req.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return { value: apiKey.trim(), apiKeyHeader: true };
  const header = req.headers.authorization;
  if (typeof header === 'string' && header.trim() !== '') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
    if (!m) throw new AppException('invalid_token', 'The Authorization header must use the Bearer scheme');
    return { value: m[1], apiKeyHeader: false };
  }
  return null;
}
