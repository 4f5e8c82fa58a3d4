import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ERROR_CATALOGUE } from '../errors/error-codes';
import { documentIdempotency } from './idempotency-docs';

const DESCRIPTION = `Self-hosted test management service: test runs and results, JUnit import, versioned
environment topologies, products and components by risk, datasets bound to test cases.

**Authentication.** \`POST /api/v1/auth/login\` returns an access token; send it as
\`Authorization: Bearer <token>\`. A personal API key (\`tms_…\`, from \`POST /api/v1/users/me/api-keys\`)
works the same way, or as \`X-API-Key\`. When \`X-API-Key\` is sent it wins: its value is taken as
an API key (a bad one is 401 \`invalid_api_key\`, even beside a valid bearer token).

**Access.** Everything lives in a project. Roles, lowest to highest: viewer < tester < lead;
administrators act as lead everywhere. A caller who is not a member gets 404 for anything in the
project, a member below the needed role 403 \`insufficient_project_role\`.

**Conventions.** snake_case JSON; unknown fields and explicit nulls on non-nullable fields are 422;
text is trimmed; lists answer \`{items, page, page_size, has_next, total}\` with \`page\` ≥ 1 and
\`page_size\` 1..200 (row lists 1..500); sorting ties are broken by id; search is a case-insensitive
substring match where \`%\` and \`_\` are literal. Every writing request runs in one transaction.
Checks run in this order: authentication (401) → request shape (415 media type or content coding, 413
size, 400 undecodable body, 422 malformed JSON or invalid fields) → resource and project (404) → role (403) → domain rules (409/422). Bodies of
GET, HEAD, DELETE and OPTIONS requests are ignored. JSON bodies may nest at most 64 levels.
A request body (JSON or multipart) may be compressed with \`Content-Encoding\` \`gzip\`, \`deflate\` or
\`br\` (one coding); the size limits apply to the decoded body. Any other coding is 415
\`unsupported_content_encoding\`, a body its coding does not decode 400 \`invalid_content_encoding\`
(both after authentication, like the other body problems). Requests the HTTP server refuses before
reading them (header block over 16 KB: 431, malformed HTTP: 400 \`bad_request\`, not received in
time: 408, an \`Expect\` other than 100-continue: 417, CONNECT: 405) are answered with problem bodies
too, and the connection is closed.

**Retries.** Every authenticated POST accepts an \`Idempotency-Key\` header (1–255 printable ASCII
characters, scoped to the caller, method and path): a repeat of the same request within
\`IDEMPOTENCY_TTL_HOURS\` (24 h) gets the first answer back byte for byte with
\`Idempotent-Replayed: true\` and changes nothing; the key with another request is 422
\`idempotency_key_reused\`, while the first still runs 409 \`idempotency_request_in_progress\`.

**Errors** are \`application/problem+json\`: \`type, title, status, detail, instance, code, request_id\`
and, on validation failures, \`errors\` (dot-joined field path → messages). Codes:

${Object.entries(ERROR_CATALOGUE)
  .map(([code, e]) => `- \`${code}\` (${e.status}) ${e.title}`)
  .join('\n')}
`;

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Test Management Service API')
    .setDescription(DESCRIPTION)
    .setVersion('1.0.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Access token or API key (tms_…)' })
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    // Unique across controllers: `ProjectsController.list` → `projectsList`.
    operationIdFactory: (controllerKey: string, methodKey: string) => {
      const c = controllerKey.replace(/Controller$/, '');
      return c.charAt(0).toLowerCase() + c.slice(1) + methodKey.charAt(0).toUpperCase() + methodKey.slice(1);
    },
  });
  documentIdempotency(document);
  return document;
}

export function redocHtml(): string {
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Test Management Service API — ReDoc</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="/openapi.json"></redoc>
<script src="/redoc/redoc.standalone.js"></script></body></html>`;
}
