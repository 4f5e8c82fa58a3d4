import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Email addresses are unique, compared without letter case, and stored lower-cased (reference
 * products-auth-errors §4.1: "`email` … unique; stored trimmed + lower-cased"; a duplicate is 409
 * `user_already_exists`). Existing addresses are lower-cased (the letter case of an address is
 * not significant to anyone but its mail server, which the service never addresses by case).
 *
 * Two users sharing an address (possible before) stop the migration with a message listing them,
 * instead of losing or rewriting either: an administrator changes one of them (PATCH /users/{id})
 * and starts the service again. `down` drops the index; the addresses stay lower-cased.
 */
export class UserEmailsUnique1763700019950 implements MigrationInterface {
  name = 'UserEmailsUnique1763700019950';

  async up(q: QueryRunner): Promise<void> {
    const shared = (await q.query(`
      SELECT lower(btrim(email)) AS email, string_agg(username, ', ' ORDER BY username) AS users
        FROM users WHERE email IS NOT NULL
       GROUP BY lower(btrim(email)) HAVING count(*) > 1
       ORDER BY 1 LIMIT 20`)) as Array<{ email: string; users: string }>;
    if (shared.length > 0) {
      const list = shared.map((s) => `${s.email} (${s.users})`).join('; ');
      throw new Error(
        `Email addresses must be unique from this version on; these are shared by several users: ${list}. ` +
          'Change all but one of each (PATCH /users/{id} with another email, or null) and start again.',
      );
    }
    await q.query(
      `UPDATE users SET email = lower(btrim(email))
        WHERE email IS NOT NULL AND email IS DISTINCT FROM lower(btrim(email))`,
    );
    await q.query(`CREATE UNIQUE INDEX uq_users_email ON users (lower(email))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS uq_users_email`);
  }
}
