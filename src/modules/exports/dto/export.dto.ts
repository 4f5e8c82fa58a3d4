import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { OptionalNotNull } from '../../../common/validation/decorators';
import { REPORT_FORMATS, ReportFormat } from '../report';

export class ExportQueryDto {
  @ApiPropertyOptional({
    enum: REPORT_FORMATS,
    default: 'json',
    description:
      '`json` (application/json), `xml` (application/xml), `junit` (JUnit XML, application/xml, `.xml`), ' +
      '`csv` (text/csv), `pdf` (application/pdf).',
  })
  @OptionalNotNull()
  @IsIn(REPORT_FORMATS, { message: `format must be one of: ${REPORT_FORMATS.join(', ')}` })
  format: ReportFormat = 'json';
}
