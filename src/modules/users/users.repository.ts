import { Injectable } from '@nestjs/common';
import { likePattern } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import type { UserSortKey } from './dto/user.dto';
import { ApiKeyEntity } from './entities/api-key.entity';
import { UserEntity } from './entities/user.entity';

/** A project membership of a user, with the project's name. */
export interface MembershipRow {
  project_id: string;
  project_name: string;
  role: string;
}

export interface UserPageQuery {
  search?: string;
  sortBy: UserSortKey;
  direction: 'ASC' | 'DESC';
  offset: number;
  limit: number;
}

/** The columns of a new user (timestamps come from the database). */
export type NewUser = Omit<UserEntity, 'createdAt' | 'updatedAt'>;
/** The columns of a new API key (`created_at` comes from the database). */
export type NewApiKey = Omit<ApiKeyEntity, 'createdAt'>;

const USER_SORT_KEYS: Record<UserSortKey, string> = {
  created_at: 'u.created_at',
  updated_at: 'u.updated_at',
  username: 'lower(u.username)',
  display_name: "lower(coalesce(u.display_name, ''))",
  last_login_at: "coalesce(u.last_login_at, '-infinity'::timestamptz)",
};

/** `users` and `api_keys`, both read and written as their entities. */
@Injectable()
export class UsersRepository {
  constructor(private readonly db: Db) {}

  private get users() {
    return this.db.repo(UserEntity);
  }

  private get apiKeys() {
    return this.db.repo(ApiKeyEntity);
  }

  /**
   * The user of a login name, whatever its letter case (PostgreSQL's `lower()`) and Unicode
   * normalisation: names are stored in form C (one stored before in another form is found as typed).
   */
  async findByUsername(username: string): Promise<UserEntity | null> {
    return this.users
      .createQueryBuilder('u')
      .where('lower(u.username) IN (lower(:username), lower(:composed))', {
        username,
        composed: username.normalize('NFC'),
      })
      .orderBy('lower(u.username) = lower(:composed)', 'DESC')
      .getOne();
  }

  /** Plain SQL: a login is not a change of the user, so `updated_at` stays. */
  async setLastLogin(id: string, at: Date): Promise<void> {
    await this.db.query('UPDATE users SET last_login_at = $2 WHERE id = $1', [id, at]);
  }

  /** The user's memberships, by project name (case-insensitive), then project id. */
  async memberships(userId: string): Promise<MembershipRow[]> {
    return this.db.query<MembershipRow>(
      `SELECT p.id AS project_id, p.name AS project_name, m.role
         FROM project_members m JOIN projects p ON p.id = m.project_id
        WHERE m.user_id = $1 ORDER BY lower(p.name), p.id`,
      [userId],
    );
  }

  /** One page of users and the total (TypeORM's getManyAndCount). */
  async page(q: UserPageQuery): Promise<[UserEntity[], number]> {
    const qb = this.users.createQueryBuilder('u');
    if (q.search) {
      qb.where(`(u.username ILIKE :s OR u.display_name ILIKE :s OR u.email ILIKE :s)`, {
        s: likePattern(q.search),
      });
    }
    qb.orderBy(USER_SORT_KEYS[q.sortBy], q.direction).addOrderBy('u.id', q.direction);
    qb.offset(q.offset).limit(q.limit);
    return qb.getManyAndCount();
  }

  async insert(user: NewUser): Promise<void> {
    await this.users.insert(this.users.create(user));
  }

  /** The user `id` (a uuid), or `null`. */
  async findById(id: string): Promise<UserEntity | null> {
    return this.users.createQueryBuilder('u').where('u.id = :id', { id }).getOne();
  }

  /** Like {@link findById}, with the row locked FOR UPDATE when a transaction is open. */
  async findByIdForUpdate(id: string): Promise<UserEntity | null> {
    const qb = this.users.createQueryBuilder('u').where('u.id = :id', { id });
    if (this.db.manager.queryRunner?.isTransactionActive) qb.setLock('pessimistic_write');
    return qb.getOne();
  }

  async save(user: UserEntity): Promise<void> {
    await this.users.save(user);
  }

  /** The user's API keys, newest first. */
  async listApiKeys(userId: string): Promise<ApiKeyEntity[]> {
    return this.apiKeys.find({ where: { userId }, order: { createdAt: 'DESC', id: 'DESC' } });
  }

  /** Inserts the key and reads it back (with its `created_at`). */
  async insertApiKey(key: NewApiKey): Promise<ApiKeyEntity> {
    await this.apiKeys.insert(this.apiKeys.create(key));
    return this.apiKeys.findOneByOrFail({ id: key.id });
  }

  /** Deletes the user's key `id` (a uuid); `false` when the user has no such key. */
  async deleteApiKey(userId: string, id: string): Promise<boolean> {
    const res = await this.apiKeys.delete({ id, userId });
    return Boolean(res.affected);
  }

  async deleteApiKeysOf(userId: string): Promise<void> {
    await this.apiKeys.delete({ userId });
  }

  /** Every access token issued to the user so far stops working (they carry the old version). */
  /**
   * Serialises the changes that take an active administrator away (until the transaction ends),
   * then counts the active administrators other than `userId`: two administrators demoting or
   * deactivating each other at once cannot both pass the count.
   */
  async otherActiveAdminsLocked(userId: string): Promise<number> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended('users.active-admins', 0))`);
    const rows = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM users WHERE is_admin AND is_active AND id <> $1`,
      [userId],
    );
    return rows[0]?.n ?? 0;
  }

  /**
   * Whether the user is active, with the row locked `FOR SHARE` until the transaction ends: a
   * deactivation (which locks the row to update it) waits for what this transaction writes for
   * the user, or has happened and is seen.
   */
  async isActiveForShare(userId: string): Promise<boolean> {
    const rows = await this.db.query<{ is_active: boolean }>(
      `SELECT is_active FROM users WHERE id = $1 FOR SHARE`,
      [userId],
    );
    return rows[0]?.is_active === true;
  }

  async bumpTokenVersion(userId: string): Promise<void> {
    await this.db.query('UPDATE users SET token_version = token_version + 1 WHERE id = $1', [userId]);
  }
}
