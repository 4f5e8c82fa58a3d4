import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsEmail,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MinLength,
} from 'class-validator';
import { PageQueryDto, SORT_ORDERS, SortOrder } from '../../../common/pagination/page';
import { MaxLen, Nullable, OptionalNotNull } from '../../../common/validation/decorators';
import { NoTrim } from '../../../common/validation/validate';
import { UserEntity } from '../entities/user.entity';
import { ApiKeyEntity } from '../entities/api-key.entity';
import { IsDateTime } from '../../../common/validation/datetime';

/** Any printable text without line breaks, tabs or other control characters. */
const USERNAME_RE = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u;
const USERNAME_MESSAGE = 'username must not contain control characters';

/** The OpenAPI property of `email` in a create or a PATCH. */
const EMAIL_PROPERTY = {
  type: String,
  nullable: true,
  maxLength: 320,
  description:
    'Stored trimmed and lower-cased; unique without letter case (409 `user_already_exists`)',
};

export class UserDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'alice' }) username: string;
  @ApiProperty({ nullable: true, type: String, example: 'Alice Example' }) display_name:
    | string
    | null;
  @ApiProperty({ nullable: true, type: String, example: 'alice@example.com' }) email: string | null;
  @ApiProperty() is_admin: boolean;
  @ApiProperty() is_active: boolean;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) last_login_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export function toUserDto(u: UserEntity): UserDto {
  return {
    id: u.id,
    username: u.username,
    display_name: u.displayName,
    email: u.email,
    is_admin: u.isAdmin,
    is_active: u.isActive,
    last_login_at: u.lastLoginAt ? u.lastLoginAt.toISOString() : null,
    created_at: u.createdAt.toISOString(),
    updated_at: u.updatedAt.toISOString(),
  };
}

export class MembershipDto {
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty() project_name: string;
  @ApiProperty({ enum: ['viewer', 'tester', 'lead'] }) role: string;
}

export class MeDto extends UserDto {
  @ApiProperty({ type: [MembershipDto] }) memberships: MembershipDto[];
}

export class CreateUserDto {
  @ApiProperty({ minLength: 3, maxLength: 64, example: 'alice' })
  @IsString()
  @MinLength(3)
  @MaxLen(64)
  @Matches(USERNAME_RE, { message: USERNAME_MESSAGE })
  username: string;

  @ApiProperty({ minLength: 10, maxLength: 256, example: 'a long passphrase' })
  @NoTrim()
  @IsString()
  @MinLength(10)
  @MaxLen(256)
  password: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200 })
  @Nullable()
  @IsString()
  @MaxLen(200)
  display_name?: string | null;

  @ApiPropertyOptional(EMAIL_PROPERTY)
  @Nullable()
  @IsEmail()
  @MaxLen(320)
  email?: string | null;

  @ApiPropertyOptional({ default: false })
  @OptionalNotNull()
  @IsBoolean()
  is_admin?: boolean;
}

export class UpdateUserDto {
  @ApiPropertyOptional({ minLength: 3, maxLength: 64, description: 'Administrators only' })
  @OptionalNotNull()
  @IsString()
  @MinLength(3)
  @MaxLen(64)
  @Matches(USERNAME_RE, { message: USERNAME_MESSAGE })
  username?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200 })
  @Nullable()
  @IsString()
  @MaxLen(200)
  display_name?: string | null;

  @ApiPropertyOptional(EMAIL_PROPERTY)
  @Nullable()
  @IsEmail()
  @MaxLen(320)
  email?: string | null;

  @ApiPropertyOptional({ description: 'Administrators only' })
  @OptionalNotNull()
  @IsBoolean()
  is_admin?: boolean;

  @ApiPropertyOptional({ description: 'Administrators only' })
  @OptionalNotNull()
  @IsBoolean()
  is_active?: boolean;
}

export class ChangePasswordDto {
  @ApiPropertyOptional({
    description:
      "Required when changing your own password (not for administrators changing someone else's)",
  })
  @NoTrim()
  @OptionalNotNull()
  @IsString()
  @MaxLen(256)
  current_password?: string;

  @ApiProperty({ minLength: 10, maxLength: 256 })
  @NoTrim()
  @IsString()
  @MinLength(10)
  @MaxLen(256)
  new_password: string;
}

export const USER_SORT_KEYS = [
  'created_at',
  'updated_at',
  'username',
  'display_name',
  'last_login_at',
] as const;
export type UserSortKey = (typeof USER_SORT_KEYS)[number];

export class ListUsersQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    description: 'Case-insensitive substring of username, display name or email',
  })
  @IsOptional()
  @IsString()
  @MaxLen(200)
  search?: string;

  @ApiPropertyOptional({ enum: USER_SORT_KEYS, default: 'created_at' })
  @OptionalNotNull()
  @IsIn(USER_SORT_KEYS)
  sort_by?: UserSortKey;

  @ApiPropertyOptional({
    enum: SORT_ORDERS,
    default: 'desc',
    description: 'Ties are broken by id in the same direction',
  })
  @OptionalNotNull()
  @IsIn(SORT_ORDERS)
  sort_order?: SortOrder;
}

export class LoginDto {
  @ApiProperty({ example: 'admin' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(64)
  username: string;

  @ApiProperty({ example: 'a long passphrase' })
  @NoTrim()
  @IsString()
  @IsNotEmpty()
  @MaxLen(256)
  password: string;
}

export class LoginResponseDto {
  @ApiProperty({ description: 'Signed access token (JWT, HS256)' }) access_token: string;
  @ApiProperty({ example: 'Bearer' }) token_type: 'Bearer';
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ type: UserDto }) user: UserDto;
}

export class CreateApiKeyDto {
  @ApiProperty({ maxLength: 120, example: 'CI pipeline' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(120)
  name: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'Must be in the future; null or absent: never expires',
  })
  @Nullable()
  @IsDateTime()
  expires_at?: string | null;
}

export class ApiKeyDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({
    example: 'tms_0a1b2c3d4e5f',
    description: 'Public part of the key, to recognise it',
  })
  prefix: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) expires_at: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) last_used_at: string | null;
}

export function toApiKeyDto(k: ApiKeyEntity): ApiKeyDto {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    created_at: k.createdAt.toISOString(),
    expires_at: k.expiresAt ? k.expiresAt.toISOString() : null,
    last_used_at: k.lastUsedAt ? k.lastUsedAt.toISOString() : null,
  };
}

export class CreatedApiKeyDto {
  @ApiProperty({ description: 'The secret key. Shown only in this response; store it now.' })
  api_key: string;
  @ApiProperty({ type: ApiKeyDto }) key: ApiKeyDto;
}

export class ApiKeyListDto {
  @ApiProperty({ type: [ApiKeyDto] }) items: ApiKeyDto[];
}
