import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { hashPassword } from '../common/auth/password';
import { uuidv7 } from '../common/persistence/ids';

/**
 * On a start with no users at all, creates the administrator. Called while the migration advisory
 * lock is held, so instances starting together create exactly one. With no ADMIN_PASSWORD a password
 * is generated and returned so the caller prints it once.
 */
export async function ensureBootstrapAdmin(
  dataSource: DataSource,
  username: string,
  password: string | null,
): Promise<{ created: boolean; generatedPassword: string | null }> {
  const rows = await dataSource.query<Array<{ n: number }>>('SELECT count(*)::int AS n FROM users');
  if ((rows[0]?.n ?? 0) > 0) return { created: false, generatedPassword: null };
  const generated = password === null ? randomBytes(18).toString('base64url') : null;
  const hash = await hashPassword(password ?? (generated as string));
  await dataSource.query(
    `INSERT INTO users (id, username, display_name, password_hash, is_admin, is_active)
     VALUES ($1, $2, $3, $4, true, true)`,
    [uuidv7(), username, 'Administrator', hash],
  );
  return { created: true, generatedPassword: generated };
}
