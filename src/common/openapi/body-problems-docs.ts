import { getSchemaPath, type OpenAPIObject } from '@nestjs/swagger';
import type { ErrorCode } from '../errors/error-codes';
import { problemContent, problemExample } from './problem-examples';
import { ProblemDto } from './problem.dto';

type Operation = NonNullable<OpenAPIObject['paths'][string]['post']>;
type ResponseObject = Extract<Operation['responses'][string], { description: string }>;

/** Problems every request body can meet before the operation reads it (the description's order). */
const BODY_PROBLEMS: ReadonlyArray<readonly [string, ErrorCode[]]> = [
  ['400', ['invalid_content_encoding']],
  ['413', ['payload_too_large']],
  ['415', ['unsupported_media_type', 'unsupported_content_encoding']],
];

/**
 * Documents the request-shape problems (400 undecodable body, 413, 415) on every POST, PUT and
 * PATCH, with an example per code; codes an operation already lists are not repeated. Operations
 * without a request body too: a body sent to them is checked (media type, coding, size) like any
 * before the operation runs.
 */
export function documentBodyProblems(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths ?? {})) {
    for (const op of [item.post, item.put, item.patch]) {
      if (op === undefined) continue;
      for (const [status, codes] of BODY_PROBLEMS) {
        const existing = op.responses[status] as ResponseObject | undefined;
        if (existing === undefined) {
          op.responses[status] = {
            description: `Problem (application/problem+json). Codes: ${codes.map((c) => `\`${c}\``).join(', ')}`,
            content: problemContent(getSchemaPath(ProblemDto), codes),
          };
          continue;
        }
        const media = existing.content?.['application/problem+json'];
        if (media === undefined) continue;
        const examples = { ...(media.examples ?? {}) };
        const added = codes.filter((c) => !(c in examples));
        for (const c of added)
          examples[c] = { summary: `${status} ${c}`, value: problemExample(c) };
        media.examples = examples;
        if (added.length > 0) {
          existing.description = `${existing.description}, ${added.map((c) => `\`${c}\``).join(', ')}`;
        }
      }
    }
  }
}
