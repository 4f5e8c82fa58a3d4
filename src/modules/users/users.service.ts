import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { apiKeyPrefix, generateApiKey } from '../../common/auth/api-key';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { dummyHash, hashPassword, verifyPassword } from '../../common/auth/password';
import { signAccessToken } from '../../common/auth/tokens';
import { AppException } from '../../common/errors/app-exception';
import { isUuid, uuidv7 } from '../../common/persistence/ids';
import { offsetOf, Page, pageOf } from '../../common/pagination/page';
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
} from './dto/user.dto';
import { UserEntity } from './entities/user.entity';
import { UsersRepository } from './users.repository';
import { toInstant } from '../../common/validation/datetime';
import { blankToNull } from '../../common/normalize';

@Injectable()
export class UsersService {
  private readonly logger = new Logger('UsersService');

  constructor(
    private readonly users: UsersRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async login(dto: LoginDto): Promise<LoginResponseDto> {
    const user = await this.users.findByUsername(dto.username);
    // Same work and the same answer for an unknown user and a wrong password.
    const ok = await verifyPassword(dto.password, user?.passwordHash ?? (await dummyHash()));
    if (!user || !ok) throw new AppException('invalid_credentials', 'Invalid username or password');
    if (!user.isActive) throw new AppException('user_disabled', 'The user account is disabled');
    user.lastLoginAt = new Date();
    // A login is not a change of the user: `updated_at` stays.
    await this.users.setLastLogin(user.id, user.lastLoginAt);
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
    const memberships = await this.users.memberships(caller.id);
    return { ...toUserDto(user), memberships };
  }

  async list(q: ListUsersQueryDto): Promise<Page<UserDto>> {
    const [rows, total] = await this.users.page({
      search: q.search,
      sortBy: q.sort_by ?? 'created_at',
      direction: (q.sort_order ?? 'desc') === 'asc' ? 'ASC' : 'DESC',
      offset: offsetOf(q.page, q.page_size),
      limit: q.page_size,
    });
    return pageOf(rows.map(toUserDto), q.page, q.page_size, total);
  }

  async create(dto: CreateUserDto): Promise<UserDto> {
    const id = uuidv7();
    await this.users.insert({
      id,
      username: usernameOf(dto.username),
      displayName: blankToNull(dto.display_name),
      email: emailOf(dto.email),
      passwordHash: await hashPassword(dto.password),
      isAdmin: dto.is_admin ?? false,
      isActive: true,
      tokenVersion: 0,
      lastLoginAt: null,
    });
    return toUserDto(await this.getEntity(id));
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
    if (user.isAdmin && user.isActive && (dto.is_admin === false || dto.is_active === false))
      await this.assertAnotherActiveAdmin(id);
    if (dto.username !== undefined) user.username = usernameOf(dto.username);
    if (dto.display_name !== undefined) user.displayName = blankToNull(dto.display_name);
    if (dto.email !== undefined) user.email = emailOf(dto.email);
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
    if (user.isAdmin && user.isActive) await this.assertAnotherActiveAdmin(id);
    user.isActive = false;
    await this.revokeAll(user);
    await this.users.save(user);
  }

  /**
   * 409 `last_admin` unless an active administrator other than `id` remains: administrators
   * cannot demote or deactivate themselves, and two of them doing it to each other at once (found
   * by an audit: both answered 200, leaving none) are serialised by a lock, so the second sees
   * the first's change.
   */
  private async assertAnotherActiveAdmin(id: string): Promise<void> {
    if ((await this.users.otherActiveAdminsLocked(id)) === 0) {
      throw new AppException(
        'last_admin',
        'This is the last active administrator: make another user an administrator first',
      );
    }
  }

  async listApiKeys(caller: AuthenticatedUser): Promise<{ items: ApiKeyDto[] }> {
    const keys = await this.users.listApiKeys(caller.id);
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
    // The caller was authenticated before this transaction: a deactivation committed since (or in
    // progress: it waits for this lock) must not leave a new key behind its revocation (found by an
    // audit: the key survived and worked again after a reactivation).
    if (!(await this.users.isActiveForShare(caller.id))) {
      throw new AppException('user_disabled', 'The user account is disabled');
    }
    const { key, prefix, hash } = generateApiKey();
    const saved = await this.users.insertApiKey({
      id: uuidv7(),
      userId: caller.id,
      name: dto.name,
      prefix,
      keyHash: hash,
      expiresAt,
      lastUsedAt: null,
    });
    this.logger.log(
      { user_id: caller.id, key_id: saved.id, prefix: apiKeyPrefix(key) },
      'API key created',
    );
    return { api_key: key, key: toApiKeyDto(saved) };
  }

  async deleteApiKey(caller: AuthenticatedUser, id: string): Promise<void> {
    if (!isUuid(id)) throw AppException.notFound('api_key_not_found', 'API key');
    if (!(await this.users.deleteApiKey(caller.id, id)))
      throw AppException.notFound('api_key_not_found', 'API key');
  }

  /** Signs the user out: every access token of theirs is revoked; API keys are not. */
  async logout(caller: AuthenticatedUser): Promise<void> {
    await this.users.bumpTokenVersion(caller.id);
  }

  private async revokeAll(user: UserEntity): Promise<void> {
    user.tokenVersion += 1;
    await this.users.deleteApiKeysOf(user.id);
  }

  /** CONTRACT §4 "admin, or the user for itself": others get 403 admin_required (after the 404). */
  private assertSelfOrAdmin(caller: AuthenticatedUser, id: string, action: string): void {
    if (!caller.isAdmin && caller.id !== id) {
      throw new AppException('admin_required', `${action} requires an administrator`);
    }
  }

  private async getEntity(id: string, lock = false): Promise<UserEntity> {
    if (!isUuid(id)) throw AppException.notFound('user_not_found', 'User');
    const user = lock ? await this.users.findByIdForUpdate(id) : await this.users.findById(id);
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

/**
 * An email address as stored: trimmed, lower-cased, blank → null (reference §4.1; unique without
 * letter case: `uq_users_email` → 409 `user_already_exists`).
 */
function emailOf(value: string | null | undefined): string | null {
  return blankToNull(value)?.toLowerCase() ?? null;
}

/**
 * A username as stored: in Unicode normalisation form C, so that `josé` typed with a combining
 * accent and with the precomposed letter is one name (unique, and found by either spelling).
 */
function usernameOf(value: string): string {
  return value.normalize('NFC');
}
