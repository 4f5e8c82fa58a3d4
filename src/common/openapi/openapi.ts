import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ALSO_NOT_FOUND, ERROR_CATALOGUE, type ErrorCode } from '../errors/error-codes';
import { documentBodyProblems } from './body-problems-docs';
import { documentConditionalRequests } from './conditional-docs';
import { documentCursorLinks } from '../pagination/cursor-docs';
import { documentSparseFields } from '../pagination/fields-docs';
import { documentSchemaExtras } from './schema-extras';
import { documentIdempotency } from './idempotency-docs';
import { documentItemLimits } from './item-limits-docs';
import { API_KEY_HEADER, API_KEY_SCHEME, BEARER_SCHEME } from './security-schemes';

/** The error catalogue as a page of its own (linked from the document's description). */
export const ERRORS_PAGE_PATH = '/docs/errors';

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
GET, HEAD, DELETE and OPTIONS requests are ignored; an operation without a request body refuses a JSON body
with fields (422 \`Unknown field\`). JSON bodies may nest at most
64 levels; a number beyond ±1.8e308 (\`1e999\`) is a 422 on its path.
A 422 lists at most 100 fields; a list's objects are validated up to the 100th invalid one.
A request body (JSON or multipart) may be compressed with \`Content-Encoding\` \`gzip\`, \`deflate\` or
\`br\` (one coding); the size limits apply to the decoded body. Any other coding is 415
\`unsupported_content_encoding\`, a body its coding does not decode 400 \`invalid_content_encoding\`
(both after authentication, like the other body problems). Requests the HTTP server refuses before
reading them (header block over 16 KB: 431, malformed HTTP: 400 \`bad_request\`, not received in
time: 408, an \`Expect\` other than 100-continue: 417, CONNECT: 405) are answered with problem bodies
too, and the connection is closed.

**Retries.** Every authenticated POST accepts an \`Idempotency-Key\` header (1–255 printable ASCII
characters, scoped to the caller, method and path), but those answering a new secret (API keys,
webhook subscriptions and secret rotations) and \`POST /users\` (its body holds a password), which
ignore it: a repeat of the same request within
\`IDEMPOTENCY_TTL_HOURS\` (24 h) gets the first answer back byte for byte with
\`Idempotent-Replayed: true\` and changes nothing; the key with another request is 422
\`idempotency_key_reused\`, while the first still runs 409 \`idempotency_request_in_progress\`.

**Caching and concurrency.** Every GET answered 200 but report exports (streamed) carries a strong
\`ETag\` (the SHA-256 of the body); send it back in \`If-None-Match\` and an unchanged resource or list answers \`304 Not
Modified\` without a body. \`PATCH\`, \`PUT\` and \`DELETE\` on runs, run cases and rows,
environments, components (and their dependencies), products (and their components), test cases,
datasets and test plans honour \`If-Match\`: a stale tag is 412 \`precondition_failed\` with the current
\`ETag\`, and nothing changes. Responses over 1 KB are compressed (\`br\`, else \`gzip\`) when the
client sends \`Accept-Encoding\`; \`Vary: Accept-Encoding\`.

**Errors** are \`application/problem+json\`: \`type, title, status, detail, instance, code, request_id\`
and, on validation failures, \`errors\` (dot-joined field path → messages). Every code with its status:
the [error catalogue](${ERRORS_PAGE_PATH}). Each operation lists its problem responses with an example
per code.
`;

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Test Management Service API')
    .setDescription(DESCRIPTION)
    .setVersion('1.0.0')
    .setLicense('MIT', 'https://opensource.org/license/mit')
    // Relative: the document describes the server that serves it, whatever its public address.
    .addServer('/', 'This server')
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: 'Access token or API key (tms_…)' },
      BEARER_SCHEME,
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: API_KEY_HEADER,
        description: 'Personal API key (tms_…); wins over `Authorization` when both are sent',
      },
      API_KEY_SCHEME,
    )
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    // Unique across controllers: `ProjectsController.list` → `projectsList`.
    operationIdFactory: (controllerKey: string, methodKey: string) => {
      const c = controllerKey.replace(/Controller$/, '');
      return (
        c.charAt(0).toLowerCase() +
        c.slice(1) +
        methodKey.charAt(0).toUpperCase() +
        methodKey.slice(1)
      );
    },
  });
  documentItemLimits(document);
  documentBodyProblems(document);
  documentIdempotency(document);
  documentConditionalRequests(document);
  documentCursorLinks(document);
  documentSparseFields(document);
  documentSchemaExtras(document);
  return document;
}

const escapeHtml = (t: string) =>
  t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The error catalogue page (`/docs/errors`): every code with its status and title, self-contained. */
export function errorsPageHtml(): string {
  const rows = Object.entries(ERROR_CATALOGUE)
    .map(
      ([code, e]) =>
        `<tr id="${escapeHtml(code)}"><td>${e.status}</td><td><code>${escapeHtml(code)}</code></td><td>${escapeHtml(e.title)}${ALSO_NOT_FOUND.has(code as ErrorCode) ? ' (404 Not found when a GET asks for it)' : ''}</td></tr>`,
    )
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Test Management Service API — error codes</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:60rem}table{border-collapse:collapse}
td,th{border-bottom:1px solid #ddd;padding:.3rem .8rem;text-align:left}</style></head>
<body><h1>Error codes</h1>
<p>Every problem response is <code>application/problem+json</code> with <code>type, title, status,
detail, instance, code, request_id</code> and, on validation failures, <code>errors</code> (dot-joined
field path → messages). Its <code>code</code> is one of these. Back to the <a href="/docs">API
documentation</a> or <a href="/redoc">ReDoc</a>.</p>
<table><thead><tr><th>Status</th><th>Code</th><th>Title</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`;
}

/**
 * Sent with the ReDoc page: everything from this server only (`'self'`, plus the `data:` and `blob:`
 * URLs ReDoc makes itself). ReDoc's sidebar shows a Redocly logo from cdn.redoc.ly that no option
 * turns off; this policy keeps the browser from loading it (ReDoc then leaves the image out).
 * ReDoc needs inline styles (styled-components), a blob worker (search) and `new Function` (its
 * bundled JSON-schema validator): allowed, as none of them reaches another host.
 */
export const REDOC_CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; " +
  "script-src 'self' 'unsafe-eval' blob:; worker-src 'self' blob:; connect-src 'self'; " +
  "font-src 'self' data:";

export function redocHtml(): string {
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Test Management Service API — ReDoc</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="/openapi.json"></redoc>
<script src="/redoc/redoc.standalone.js"></script></body></html>`;
}
