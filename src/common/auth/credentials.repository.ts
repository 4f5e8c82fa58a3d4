import { Injectable } from '@nestjs/common';
import { Db } from '../persistence/db.service';

/** What authentication needs of a user. */
export interface CredentialUserRow {
  id: string;
  username: string;
  display_name: string | null;
  is_admin: boolean;
  is_active: boolean;
  token_version: number;
}

/** A personal API key with its owner, as authentication reads it. */
export interface ApiKeyCredentialRow extends CredentialUserRow {
  key_id: string;
  key_hash: string;
  expired: boolean;
  /** Its `last_used_at` is more than a minute old (or unset). */
  stale: boolean;
}

/** The statements of authentication (every authenticated request runs one). */
@Injectable()
export class CredentialsRepository {
  constructor(private readonly db: Db) {}

  async userById(id: string): Promise<CredentialUserRow | undefined> {
    const rows = await this.db.prepared<CredentialUserRow>(
      'auth.user',
      'SELECT id, username, display_name, is_admin, is_active, token_version FROM users WHERE id = $1',
      [id],
    );
    return rows[0];
  }

  async apiKeyByPrefix(prefix: string): Promise<ApiKeyCredentialRow | undefined> {
    const rows = await this.db.prepared<ApiKeyCredentialRow>(
      'auth.api-key',
      `SELECT u.id, u.username, u.display_name, u.is_admin, u.is_active, u.token_version,
              k.id AS key_id, k.key_hash,
              (k.expires_at IS NOT NULL AND k.expires_at <= now()) AS expired,
              (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') AS stale
         FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.prefix = $1`,
      [prefix],
    );
    return rows[0];
  }

  /**
   * Records that the key was used, outside the request's transaction (a read request has none; a
   * failed write must not undo it).
   */
  async touchApiKey(keyId: string): Promise<void> {
    await this.db.dataSource.query('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [keyId]);
  }
}
