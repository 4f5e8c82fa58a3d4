import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { PROJECT_ROLES, ProjectRole } from '../../../common/access/roles';
import { PageQueryDto } from '../../../common/pagination/page';
import { Nullable, OptionalNotNull } from '../../../common/validation/decorators';
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
  @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ nullable: true, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLength(10000)
  description?: string | null;
}

export class UpdateProjectDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @OptionalNotNull()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ nullable: true, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLength(10000)
  description?: string | null;
}

export class ListProjectsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Case-insensitive substring of the name' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;
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
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
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
