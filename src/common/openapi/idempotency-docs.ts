import { getSchemaPath, type OpenAPIObject } from '@nestjs/swagger';
import { NO_IDEMPOTENCY_EXTENSION } from '../idempotency/not-idempotent.decorator';
import { problemContent, problemExample } from './problem-examples';
import { ProblemDto } from './problem.dto';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  MAX_IDEMPOTENCY_KEY_LENGTH,
} from '../idempotency/idempotency-key';

/** What the `Idempotency-Key` header parameter of each authenticated POST says. */
export const IDEMPOTENCY_KEY_DESCRIPTION = [
  `Makes a retry of this request safe (IETF httpapi Idempotency-Key draft, as Stripe applies it): 1 to`,
  `${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters (else 422 \`validation_error\` on`,
  '`header.idempotency-key`), scoped to the caller (an API key acts as its user), the method and the',
  "resource's path (an id in any letter case or a trailing slash is the same path). The first",
  'request runs; its status, `Location` and body are stored in the same transaction as',
  'its effect. A repeat with the same key and the same request (query string and body: a JSON body as',
  'parsed, a multipart body as its bytes with the boundary ignored, so every file and field counts)',
  'within `IDEMPOTENCY_TTL_HOURS` (24 h) gets the stored response back byte for byte with',
  `\`${IDEMPOTENT_REPLAYED_HEADER}: true\` and changes nothing (a replayed problem keeps its first`,
  '`request_id`); the same key with another request is 422',
  '`idempotency_key_reused`; while the first is still running (on any instance) 409',
  '`idempotency_request_in_progress` (retry after its `Retry-After`, 1 s). 5xx answers are not',
  'stored (a retry runs again);',
  "4xx answers of the operation are; refusals before it starts (401, 415, the body's 422 — a",
  "multipart form's fields included —, 404, 403)",
  'and 413 (a body too large to read whole) are not, and a retry is checked again.',
].join(' ');

type Operation = NonNullable<OpenAPIObject['paths'][string]['post']>;
type ResponseObject = Extract<Operation['responses'][string], { description: string }>;

/** The problems a key adds to an operation, by status. */
const IDEMPOTENCY_PROBLEMS = [
  ['409', 'idempotency_request_in_progress'],
  ['422', 'idempotency_key_reused'],
] as const;

/**
 * Documents `Idempotency-Key` on every authenticated POST operation (the ones that create or
 * import; all run through TransactionInterceptor) and `Idempotent-Replayed` on their answers.
 */
export function documentIdempotency(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths ?? {})) {
    const op = item.post;
    if (op === undefined || op.security === undefined || op.security.length === 0) continue;
    if ((op as unknown as Record<string, unknown>)[NO_IDEMPOTENCY_EXTENSION] === true) continue;
    op.parameters = [
      ...(op.parameters ?? []),
      {
        name: IDEMPOTENCY_KEY_HEADER,
        in: 'header',
        required: false,
        description: IDEMPOTENCY_KEY_DESCRIPTION,
        schema: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
          pattern: '^[\\x20-\\x7E]+$',
          example: '3f1c2a9e-5b7d-4c1e-9a0b-2d4e6f8a1c3b',
        },
      },
    ];
    op.responses = op.responses ?? {};
    for (const [status, code] of IDEMPOTENCY_PROBLEMS) {
      const existing = op.responses[status] as ResponseObject | undefined;
      if (existing !== undefined && 'description' in existing) {
        existing.description = `${existing.description}, \`${code}\` (with ${IDEMPOTENCY_KEY_HEADER})`;
        // After the operation's own examples (the first one stays the default).
        const media = existing.content?.['application/problem+json'];
        if (media !== undefined) {
          media.examples = {
            ...(media.examples ?? {}),
            [code]: { summary: `${status} ${code}`, value: problemExample(code) },
          };
        }
      } else {
        op.responses[status] = {
          description: `Problem (application/problem+json). Codes: \`${code}\` (with ${IDEMPOTENCY_KEY_HEADER})`,
          content: problemContent(getSchemaPath(ProblemDto), [code]),
        };
      }
    }
    for (const [status, response] of Object.entries(op.responses)) {
      if (!/^[24]\d\d$/.test(status) || response === undefined || !('description' in response)) {
        continue;
      }
      response.headers = {
        ...(response.headers ?? {}),
        [IDEMPOTENT_REPLAYED_HEADER]: {
          description: `\`true\` when this is the stored answer to an earlier request with the same ${IDEMPOTENCY_KEY_HEADER}`,
          schema: { type: 'string', enum: ['true'] },
        },
      };
    }
  }
}
