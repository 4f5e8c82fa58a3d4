import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn } from 'class-validator';
import { OptionalNotNull, QueryBool } from '../../../common/validation/decorators';
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

  @ApiPropertyOptional({
    default: false,
    description:
      '`true`: a `csv` download starts with a UTF-8 byte order mark (EF BB BF), which Excel needs to ' +
      'read the file as UTF-8 (without it, non-ASCII names are garbled there); a parser that does not ' +
      'expect one sees it before the first header. Other formats ignore it.',
  })
  @QueryBool()
  @OptionalNotNull()
  @IsBoolean()
  bom: boolean = false;
}
