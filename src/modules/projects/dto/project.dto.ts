import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString } from 'class-validator';
import { PROJECT_ROLES, ProjectRole } from '../../../common/access/roles';
import { PageQueryDto, SORT_ORDERS, SortOrder } from '../../../common/pagination/page';
import { MaxLen, Nullable, OptionalNotNull } from '../../../common/validation/decorators';
import { ProjectEntity } from '../entities/project.entity';

export class ProjectDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'Checkout' }) name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export function toProjectDto(p: ProjectEntity): ProjectDto {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

export class CreateProjectDto {
  @ApiProperty({ maxLength: 200, example: 'Checkout' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(200)
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  description?: string | null;
}

export class UpdateProjectDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @OptionalNotNull()
  @IsString()
  @IsNotEmpty()
  @MaxLen(200)
  name?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  description?: string | null;
}

export const PROJECT_SORT_KEYS = ['created_at', 'updated_at', 'name'] as const;
export type ProjectSortKey = (typeof PROJECT_SORT_KEYS)[number];

export class ListProjectsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Case-insensitive substring of the name or description' })
  @IsOptional()
  @IsString()
  @MaxLen(200)
  search?: string;

  @ApiPropertyOptional({ enum: PROJECT_SORT_KEYS, default: 'created_at' })
  @OptionalNotNull()
  @IsIn(PROJECT_SORT_KEYS)
  sort_by?: ProjectSortKey;

  @ApiPropertyOptional({
    enum: SORT_ORDERS,
    default: 'desc',
    description: 'Ties are broken by id in the same direction',
  })
  @OptionalNotNull()
  @IsIn(SORT_ORDERS)
  sort_order?: SortOrder;
}

export class MemberDto {
  @ApiProperty({ format: 'uuid' }) user_id: string;
  @ApiProperty() username: string;
  @ApiProperty({ nullable: true, type: String }) display_name: string | null;
  @ApiProperty({ enum: PROJECT_ROLES }) role: ProjectRole;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class MemberListDto {
  @ApiProperty({ type: [MemberDto] }) items: MemberDto[];
}

export class AddMemberDto {
  @ApiProperty({
    format: 'uuid',
    description: 'An existing, active user (unknown → 404 `user_not_found`)',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLen(64)
  user_id: string;

  @ApiProperty({ enum: PROJECT_ROLES })
  @IsIn(PROJECT_ROLES)
  role: ProjectRole;
}

export class UpdateMemberDto {
  @ApiProperty({ enum: PROJECT_ROLES })
  @IsIn(PROJECT_ROLES)
  role: ProjectRole;
}
