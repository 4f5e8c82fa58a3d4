import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsIn, IsNotEmpty, IsObject, IsString } from 'class-validator';
import {
  MaxItems,
  MaxLen,
  NestedList,
  NoNul,
  OptionalNotNull,
} from '../../../common/validation/decorators';
import { ComponentDto, ID_MAX_LENGTH } from './component.dto';

export const DEPENDENCY_TYPES = ['depends_on'] as const;
export type DependencyType = (typeof DEPENDENCY_TYPES)[number];

/** Most dependencies one component may declare in one PUT. */
export const MAX_DEPENDENCIES_PER_COMPONENT = 1000;

export class DependencyDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid', description: 'The component that depends on the target' })
  source_component_id: string;
  @ApiProperty({ format: 'uuid' }) target_component_id: string;
  @ApiProperty({ enum: DEPENDENCY_TYPES }) dependency_type: DependencyType;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class DependencyListDto {
  @ApiProperty({ type: [DependencyDto] }) items: DependencyDto[];
}

export class DependencyInputDto {
  @ApiProperty({
    format: 'uuid',
    description:
      'A component of the same project (unknown id or another project → 422 ' +
      '`component_project_mismatch`), not the component itself',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLen(ID_MAX_LENGTH)
  @NoNul()
  target_component_id: string;

  @ApiPropertyOptional({ enum: DEPENDENCY_TYPES, default: 'depends_on' })
  @OptionalNotNull()
  @IsIn(DEPENDENCY_TYPES)
  dependency_type?: DependencyType;
}

export class ReplaceDependenciesDto {
  @ApiPropertyOptional({
    type: [DependencyInputDto],
    default: [],
    description: `The complete new set of outgoing dependencies (at most ${MAX_DEPENDENCIES_PER_COMPONENT}); [] (or omitted) clears them`,
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(MAX_DEPENDENCIES_PER_COMPONENT)
  @IsObject({ each: true })
  @NestedList(() => DependencyInputDto)
  dependencies?: DependencyInputDto[];
}

export class ComponentGraphDto {
  @ApiProperty({
    type: [ComponentDto],
    description: 'Every component of the project, highest risk first',
  })
  components: ComponentDto[];
  @ApiProperty({ type: [DependencyDto], description: 'Every dependency edge of the project' })
  dependencies: DependencyDto[];
}
