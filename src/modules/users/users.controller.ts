import { Controller, Delete, Get, Param, Patch, Post, Put, UseInterceptors } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { CurrentUser } from '../../common/auth/current-user.decorator';
import { NotIdempotent } from '../../common/idempotency/not-idempotent.decorator';
import { PageSchema } from '../../common/pagination/page';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body, Query } from '../../common/validation/request-parts';
import {
  ApiKeyListDto,
  ChangePasswordDto,
  CreateApiKeyDto,
  CreatedApiKeyDto,
  CreateUserDto,
  ListUsersQueryDto,
  LoginDto,
  LoginResponseDto,
  MeDto,
  UpdateUserDto,
  UserDto,
} from './dto/user.dto';
import { LoginThrottleInterceptor } from './login-throttle.interceptor';
import { UsersService } from './users.service';

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(private readonly users: UsersService) {}

  @Post('login')
  @Transactional()
  @NotIdempotent()
  @UseInterceptors(LoginThrottleInterceptor)
  @Endpoint({
    summary: 'Log in with username and password',
    description:
      'Returns a signed access token to send as `Authorization: Bearer <token>`. An unknown user and a wrong password answer identically (401 `invalid_credentials`). ' +
      'Failed logins are counted, in the database so every instance of the service shares the counts, per username (case-insensitive, whether or not the user exists) and per client address: ' +
      'after `LOGIN_MAX_FAILURES` failures (default 10) for a username or `LOGIN_MAX_FAILURES_PER_ADDRESS` (default 50) from an address, further attempts are refused with 429 `too_many_attempts` and `Retry-After` for `LOGIN_LOCKOUT_SECONDS` (default 60), ' +
      'and each further failure after a lockout doubles it, up to `LOGIN_MAX_LOCKOUT_SECONDS` (default 3600). A refused attempt is answered before the password is checked, whether it is right or wrong. Each attempt is counted when it starts, before its password is checked, so concurrent attempts on any number of instances cannot pass the limit: the attempt that reaches it starts the lockout, attempts already running finish normally, and an attempt that does not fail with `invalid_credentials` (a success, `user_disabled`) is taken back. ' +
      'Counts are forgotten `LOGIN_WINDOW_SECONDS` (default 900) after the first failure or after the end of the last lockout, whichever is later; a successful login forgets the username\'s count (not the address\'s). ' +
      'Behind a reverse proxy, `TRUST_PROXY` must be set for the client address to be the real one. Requests with access tokens or API keys are never throttled. An `Idempotency-Key` header is ignored here (the answer carries a token).',
    access: 'public',
    response: LoginResponseDto,
    problems: ['invalid_credentials', 'user_disabled', 'too_many_attempts'],
  })
  login(@Body() dto: LoginDto): Promise<LoginResponseDto> {
    return this.users.login(dto);
  }

  @Post('logout')
  @Transactional()
  @Endpoint({
    summary: 'Sign out: revoke your access tokens',
    description:
      'Every access token issued to you so far stops working at once, on every instance (a token ' +
      "carries your token version, which this raises): all your sessions end, as after a password " +
      'change. Your API keys are not affected. The dashboard calls it when you sign out.',
    access: 'authenticated',
    status: 204,
  })
  logout(@CurrentUser() user: AuthenticatedUser): Promise<void> {
    return this.users.logout(user);
  }

  @Get('me')
  @Endpoint({
    summary: 'The authenticated user and their project memberships',
    access: 'authenticated',
    response: MeDto,
  })
  me(@CurrentUser() user: AuthenticatedUser): Promise<MeDto> {
    return this.users.me(user);
  }
}

@ApiTags('users')
@Controller('users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Get('me/api-keys')
  @Endpoint({
    summary: 'List your personal API keys (secrets are never shown again)',
    access: 'authenticated',
    response: ApiKeyListDto,
  })
  listApiKeys(@CurrentUser() user: AuthenticatedUser): Promise<ApiKeyListDto> {
    return this.users.listApiKeys(user);
  }

  @Post('me/api-keys')
  @Transactional()
  @NotIdempotent()
  @Endpoint({
    summary: 'Create a personal API key',
    description:
      'The key (`tms_…`) is returned once in `api_key` and stored only as a SHA-256 hash. Send it as `Authorization: Bearer <key>` or `X-API-Key: <key>`; it acts with your rights. An `Idempotency-Key` header is ignored here: the answer carries the secret, which is never stored.',
    access: 'authenticated',
    status: 201,
    response: CreatedApiKeyDto,
  })
  createApiKey(
    @CurrentUser() user: AuthenticatedUser,
    @Body() dto: CreateApiKeyDto,
  ): Promise<CreatedApiKeyDto> {
    return this.users.createApiKey(user, dto);
  }

  @Delete('me/api-keys/:id')
  @Transactional()
  @Endpoint({
    summary: 'Revoke one of your API keys (effective at once)',
    access: 'authenticated',
    status: 204,
    problems: ['api_key_not_found'],
  })
  deleteApiKey(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string): Promise<void> {
    return this.users.deleteApiKey(user, id);
  }

  @Get()
  @Endpoint({
    summary: 'List users',
    description:
      '`search` matches username, display name or email (case-insensitive substring). Default order: newest first (`sort_by=created_at`, `sort_order=desc`); ties are broken by id.',
    access: 'admin',
    response: { schema: PageSchema('UserDto') },
  })
  list(@Query() q: ListUsersQueryDto) {
    return this.users.list(q);
  }

  // Its body holds a password: an Idempotency-Key would store the body's SHA-256 fingerprint,
  // which a dictionary attack reverses at SHA-256 speed (found by an audit). Never stored.
  @Post()
  @NotIdempotent()
  @Transactional()
  @Endpoint({
    summary: 'Create a user',
    access: 'admin',
    status: 201,
    response: UserDto,
    problems: ['user_already_exists'],
  })
  create(@Body() dto: CreateUserDto): Promise<UserDto> {
    return this.users.create(dto);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a user',
    description:
      'Administrators read anyone; other users only themselves (another existing user → 403 `admin_required`). `me` addresses the caller.',
    access: 'authenticated',
    response: UserDto,
    problems: ['user_not_found', 'admin_required'],
  })
  get(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string): Promise<UserDto> {
    return this.users.get(user, id);
  }

  @Patch(':id')
  @Transactional()
  @Endpoint({
    summary: 'Update a user',
    description:
      'A user may change their own `display_name` and `email` (null clears them); only administrators change other users, `username`, `is_admin` and `is_active` (otherwise 403 `admin_required`). Administrators cannot demote or deactivate themselves (403 `forbidden`), and the last active administrator cannot be demoted or deactivated (409 `last_admin`; two administrators demoting each other at once: one of them succeeds). Deactivating revokes tokens and API keys. `me` addresses the caller.',
    access: 'authenticated',
    response: UserDto,
    problems: ['user_not_found', 'admin_required', 'forbidden', 'user_already_exists', 'last_admin'],
  })
  update(
    @CurrentUser() user: AuthenticatedUser,
    @Param('id') id: string,
    @Body() dto: UpdateUserDto,
  ): Promise<UserDto> {
    return this.users.update(user, id, dto);
  }

  @Put(':id/password')
  @Transactional()
  @Endpoint({
    summary: 'Change a password',
    description:
      "The user itself must give `current_password` (wrong → 422 `invalid_current_password`); administrators may set anyone's without it; another user's password otherwise → 403 `admin_required`. Every earlier access token of the user is revoked (API keys stay valid). `me` addresses the caller.",
    access: 'authenticated',
    status: 204,
    problems: ['user_not_found', 'invalid_current_password', 'admin_required'],
  })
  changePassword(
    @CurrentUser() user: AuthenticatedUser,
    @Param('id') id: string,
    @Body() dto: ChangePasswordDto,
  ): Promise<void> {
    return this.users.changePassword(user, id, dto);
  }

  @Delete(':id')
  @Transactional()
  @Endpoint({
    summary: 'Deactivate a user',
    description:
      'Sets `is_active=false` and revokes tokens and API keys; the row stays so history keeps its names. The last active administrator cannot be deactivated (409 `last_admin`).',
    access: 'admin',
    status: 204,
    problems: ['user_not_found', 'forbidden', 'last_admin'],
  })
  deactivate(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string): Promise<void> {
    return this.users.deactivate(user, id);
  }
}
