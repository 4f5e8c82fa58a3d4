import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { apiKeyPrefix, generateApiKey } from '../../common/auth/api-key';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { dummyHash, hashPassword, verifyPassword } from '../../common/auth/password';
import { signAccessToken } from '../../common/auth/tokens';
import { AppException } from '../../common/errors/app-exception';
import { isUuid, uuidv7 } from '../../common/persistence/ids';
import { Db } from '../../common/persistence/db.service';
import { likePattern, offsetOf, Page, pageOf } from '../../common/pagination/page';
import {
  ApiKeyDto,
  ChangePasswordDto,
  CreateApiKeyDto,
  CreatedApiKeyDto,
  CreateUserDto,
  ListUsersQueryDto,
  LoginDto,
  LoginResponseDto,
  MeDto,
  toApiKeyDto,
  toUserDto,
  UpdateUserDto,
  UserDto,
  UserSortKey,
} from './dto/user.dto';
import { ApiKeyEntity } from './entities/api-key.entity';
import { UserEntity } from './entities/user.entity';
import { toInstant } from '../../common/validation/datetime';

@Injectable()
export class UsersService {
  private readonly logger = new Logger('UsersService');

  constructor(
    private readonly db: Db,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private get users() {
    return this.db.repo(UserEntity);
  }

  async login(dto: LoginDto): Promise<LoginResponseDto> {
    const user = await this.users
      .createQueryBuilder('u')
      .where('lower(u.username) = lower(:username)', { username: dto.username })
      .getOne();
    // Same work and the same answer for an unknown user and a wrong password.
    const ok = await verifyPassword(dto.password, user?.passwordHash ?? (await dummyHash()));
    if (!user || !ok) throw new AppException('invalid_credentials', 'Invalid username or password');
    if (!user.isActive) throw new AppException('user_disabled', 'The user account is disabled');
    user.lastLoginAt = new Date();
    // Plain SQL: a login is not a change of the user, so `updated_at` stays.
    await this.db.query('UPDATE users SET last_login_at = $2 WHERE id = $1', [
      user.id,
      user.lastLoginAt,
    ]);
    const { token, expiresAt } = signAccessToken(
      { sub: user.id, ver: user.tokenVersion },
      this.config.authSecret,
      this.config.accessTokenTtlSeconds,
    );
    return {
      access_token: token,
      token_type: 'Bearer',
      expires_at: expiresAt.toISOString(),
      user: toUserDto(user),
    };
  }

  async me(caller: AuthenticatedUser): Promise<MeDto> {
    const user = await this.getEntity(caller.id);
    const memberships = await this.db.query<{
      project_id: string;
      project_name: string;
      role: string;
    }>(
      `SELECT p.id AS project_id, p.name AS project_name, m.role
         FROM project_members m JOIN projects p ON p.id = m.project_id
        WHERE m.user_id = $1 ORDER BY lower(p.name), p.id`,
      [caller.id],
    );
    return { ...toUserDto(user), memberships };
  }

  async list(q: ListUsersQueryDto): Promise<Page<UserDto>> {
    const qb = this.users.createQueryBuilder('u');
    if (q.search) {
      qb.where(`(u.username ILIKE :s OR u.display_name ILIKE :s OR u.email ILIKE :s)`, {
        s: likePattern(q.search),
      });
    }
    const dir = (q.sort_order ?? 'desc') === 'asc' ? 'ASC' : 'DESC';
    qb.orderBy(USER_SORT_KEYS[q.sort_by ?? 'created_at'], dir).addOrderBy('u.id', dir);
    qb.offset(offsetOf(q.page, q.page_size)).limit(q.page_size);
    const [rows, total] = await qb.getManyAndCount();
    return pageOf(rows.map(toUserDto), q.page, q.page_size, total);
  }

  async create(dto: CreateUserDto): Promise<UserDto> {
    const entity = this.users.create({
      id: uuidv7(),
      username: dto.username,
      displayName: blankToNull(dto.display_name),
      email: blankToNull(dto.email),
      passwordHash: await hashPassword(dto.password),
      isAdmin: dto.is_admin ?? false,
      isActive: true,
      tokenVersion: 0,
      lastLoginAt: null,
    });
    await this.users.insert(entity);
    return toUserDto(await this.getEntity(entity.id));
  }

  async get(caller: AuthenticatedUser, rawId: string): Promise<UserDto> {
    const id = selfAlias(caller, rawId);
    const user = await this.getEntity(id);
    this.assertSelfOrAdmin(caller, id, 'Reading another user');
    return toUserDto(user);
  }

  async update(caller: AuthenticatedUser, rawId: string, dto: UpdateUserDto): Promise<UserDto> {
    const id = selfAlias(caller, rawId);
    const user = await this.getEntity(id, true);
    this.assertSelfOrAdmin(caller, id, 'Changing another user');
    const adminOnly = (['username', 'is_admin', 'is_active'] as const).filter(
      (k) => dto[k] !== undefined,
    );
    if (adminOnly.length > 0 && !caller.isAdmin) {
      throw new AppException(
        'admin_required',
        `Only an administrator may change ${adminOnly.join(', ')}`,
      );
    }
    if (caller.id === id && (dto.is_admin === false || dto.is_active === false)) {
      throw new AppException('forbidden', 'Administrators cannot demote or deactivate themselves');
    }
    if (dto.username !== undefined) user.username = dto.username;
    if (dto.display_name !== undefined) user.displayName = blankToNull(dto.display_name);
    if (dto.email !== undefined) user.email = blankToNull(dto.email);
    if (dto.is_admin !== undefined) user.isAdmin = dto.is_admin;
    if (dto.is_active !== undefined && dto.is_active !== user.isActive) {
      user.isActive = dto.is_active;
      if (!dto.is_active) await this.revokeAll(user);
    }
    await this.users.save(user);
    return toUserDto(await this.getEntity(id));
  }

  async changePassword(
    caller: AuthenticatedUser,
    rawId: string,
    dto: ChangePasswordDto,
  ): Promise<void> {
    const id = selfAlias(caller, rawId);
    const user = await this.getEntity(id, true);
    this.assertSelfOrAdmin(caller, id, "Changing another user's password");
    const self = caller.id === id;
    if (self && !caller.isAdmin) {
      if (dto.current_password === undefined) {
        throw AppException.validation({
          current_password: ['current_password is required to change your own password'],
        });
      }
      if (!(await verifyPassword(dto.current_password, user.passwordHash))) {
        throw new AppException('invalid_current_password', 'The current password is incorrect', {
          current_password: ['The current password is incorrect'],
        });
      }
    } else if (
      self &&
      dto.current_password !== undefined &&
      !(await verifyPassword(dto.current_password, user.passwordHash))
    ) {
      throw new AppException('invalid_current_password', 'The current password is incorrect', {
        current_password: ['The current password is incorrect'],
      });
    }
    user.passwordHash = await hashPassword(dto.new_password);
    user.tokenVersion += 1; // every earlier access token of this user stops working
    await this.users.save(user);
  }

  /** Deactivates: the row stays (history keeps names); tokens and API keys are revoked. */
  async deactivate(caller: AuthenticatedUser, rawId: string): Promise<void> {
    const id = selfAlias(caller, rawId);
    const user = await this.getEntity(id, true);
    if (caller.id === id)
      throw new AppException('forbidden', 'Administrators cannot deactivate themselves');
    user.isActive = false;
    await this.revokeAll(user);
    await this.users.save(user);
  }

  async listApiKeys(caller: AuthenticatedUser): Promise<{ items: ApiKeyDto[] }> {
    const keys = await this.db.repo(ApiKeyEntity).find({
      where: { userId: caller.id },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
    return { items: keys.map(toApiKeyDto) };
  }

  async createApiKey(caller: AuthenticatedUser, dto: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    let expiresAt: Date | null = null;
    if (dto.expires_at) {
      expiresAt = toInstant(dto.expires_at);
      if (expiresAt.getTime() <= Date.now()) {
        throw AppException.validation({ expires_at: ['expires_at must be in the future'] });
      }
    }
    const { key, prefix, hash } = generateApiKey();
    const entity = this.db.repo(ApiKeyEntity).create({
      id: uuidv7(),
      userId: caller.id,
      name: dto.name,
      prefix,
      keyHash: hash,
      expiresAt,
      lastUsedAt: null,
    });
    await this.db.repo(ApiKeyEntity).insert(entity);
    const saved = await this.db.repo(ApiKeyEntity).findOneByOrFail({ id: entity.id });
    this.logger.log(
      { user_id: caller.id, key_id: saved.id, prefix: apiKeyPrefix(key) },
      'API key created',
    );
    return { api_key: key, key: toApiKeyDto(saved) };
  }

  async deleteApiKey(caller: AuthenticatedUser, id: string): Promise<void> {
    if (!isUuid(id)) throw AppException.notFound('api_key_not_found', 'API key');
    const res = await this.db.repo(ApiKeyEntity).delete({ id, userId: caller.id });
    if (!res.affected) throw AppException.notFound('api_key_not_found', 'API key');
  }

  private async revokeAll(user: UserEntity): Promise<void> {
    user.tokenVersion += 1;
    await this.db.repo(ApiKeyEntity).delete({ userId: user.id });
  }

  /** CONTRACT §4 "admin, or the user for itself": others get 403 admin_required (after the 404). */
  private assertSelfOrAdmin(caller: AuthenticatedUser, id: string, action: string): void {
    if (!caller.isAdmin && caller.id !== id) {
      throw new AppException('admin_required', `${action} requires an administrator`);
    }
  }

  private async getEntity(id: string, lock = false): Promise<UserEntity> {
    if (!isUuid(id)) throw AppException.notFound('user_not_found', 'User');
    const qb = this.users.createQueryBuilder('u').where('u.id = :id', { id });
    if (lock && this.db.manager.queryRunner?.isTransactionActive) qb.setLock('pessimistic_write');
    const user = await qb.getOne();
    if (!user) throw AppException.notFound('user_not_found', 'User');
    return user;
  }
}

/**
 * `me` addresses the caller (`GET /users/me`, `PATCH /users/me`, `PUT /users/me/password`); ids are
 * compared in their canonical lower-case form (an upper-case UUID is the same user).
 */
function selfAlias(caller: AuthenticatedUser, id: string): string {
  return id === 'me' ? caller.id : id.toLowerCase();
}

/** Optional text that is empty after trimming is stored as null. */
function blankToNull(v: string | null | undefined): string | null {
  return v === undefined || v === null || v === '' ? null : v;
}

const USER_SORT_KEYS: Record<UserSortKey, string> = {
  created_at: 'u.created_at',
  updated_at: 'u.updated_at',
  username: 'lower(u.username)',
  display_name: "lower(coalesce(u.display_name, ''))",
  last_login_at: "coalesce(u.last_login_at, '-infinity'::timestamptz)",
};
