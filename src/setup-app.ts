import type { Server } from 'node:http';
import { dirname } from 'node:path';
import { type INestApplication, NotFoundException } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import express, { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { APP_CONFIG, AppConfig } from './config/config';
import { ProblemFilter } from './common/errors/problem.filter';
import { installClientErrorHandler } from './common/http/client-errors';
import { responseCompression } from './common/http/compression';
import { expressEtag } from './common/http/conditional';
import { AppLogger, ROOT_LOGGER } from './common/http/logging';
import { MetricsService } from './common/http/metrics.service';
import { requestBodyMiddleware, requestMiddleware } from './common/http/middleware';
import { allowedMethodsFor, registerRoutes } from './common/http/route-table';
import { defaultWebDir, loadWebApp } from './common/http/web-app';
import { FAVICON_CONTENT_TYPE, FAVICON_ICO } from './common/openapi/favicon';
import {
  buildOpenApiDocument,
  ERRORS_PAGE_PATH,
  errorsPageHtml,
  REDOC_CSP,
  redocHtml,
} from './common/openapi/openapi';
import { RequestValidationPipe } from './common/validation/validate';
import { CanonicalIdPipe } from './common/validation/canonical-id.pipe';

export const API_PREFIX = 'api/v1';

/**
 * The API explorer's (`/docs`) Content-Security-Policy: Swagger UI's own scripts and styles as it
 * ships them, no plug-ins, no `<base>`, no framing by another page.
 */
export const DOCS_CSP = "object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/**
 * Everything between NestFactory.create and listen, shared by main.ts, the tests and the OpenAPI
 * generator: middleware order, prefix, validation, the problem filter, Swagger UI and ReDoc.
 */
export function setupApp(app: NestExpressApplication | INestApplication): INestApplication {
  const config = app.get<AppConfig>(APP_CONFIG);
  const expressApp = app as NestExpressApplication;
  const metrics = app.get(MetricsService);

  expressApp.useLogger(app.get(AppLogger));
  expressApp.disable('x-powered-by');
  // Strong ETags on 200s to GET (the SHA-256 of the body) and 304 on a matching If-None-Match,
  // decided by our own rules (conditional.ts; sendJsonParts applies the same ones).
  expressApp.set('etag', expressEtag);
  // Whom to believe about the client address in X-Forwarded-For (`req.ip`: login throttling per
  // address). Off by default; behind a reverse proxy TRUST_PROXY must name it.
  expressApp.set('trust proxy', config.trustProxy);
  expressApp.set('query parser', 'simple');

  // Requests Node's HTTP server refuses before any layer sees them (431, 400, 408, 417) are
  // answered with problem bodies too.
  installClientErrorHandler(app.getHttpServer() as Server, {
    errorBaseUrl: config.errorBaseUrl,
    logger: app.get<Logger>(ROOT_LOGGER),
  });

  // Three application-level layers in front of Nest's router (each Express layer costs every request).
  expressApp.use(requestMiddleware(app.get<Logger>(ROOT_LOGGER), metrics));
  // Response compression (br, then gzip) for every body over 1 KB, streamed ones too.
  expressApp.use(responseCompression());
  if (config.corsOrigins.length > 0) {
    expressApp.enableCors({
      origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
      exposedHeaders: [
        'X-Request-Id',
        'Content-Disposition',
        'Allow',
        'Retry-After',
        'Location',
        'Idempotent-Replayed',
        'ETag',
        // The next page of a cursor walk, and the preference a background import applied.
        'Link',
        'Preference-Applied',
      ],
      maxAge: 600,
    });
  }
  expressApp.use(
    requestBodyMiddleware(
      express.json({
        limit: config.maxJsonBytes,
        type: ['application/json', 'application/*+json'],
        strict: true,
      }),
    ),
  );

  app.setGlobalPrefix(API_PREFIX, { exclude: ['healthz', 'readyz'] });
  app.useGlobalPipes(new CanonicalIdPipe(), new RequestValidationPipe());
  app.useGlobalFilters(app.get(ProblemFilter));

  const document = buildOpenApiDocument(app);
  // The dashboard at /app/ (`/` redirects there), when built (issue #21).
  const webApp = loadWebApp(config.webDir ?? defaultWebDir());
  registerRoutes({
    ...Object.fromEntries((webApp?.routes ?? []).map((path) => [path, { get: {} }])),
    ...(document.paths as Record<string, Record<string, unknown>>),
    '/healthz': { get: {} },
    '/readyz': { get: {} },
    '/openapi.json': { get: {} },
    '/docs': { get: {} },
    '/redoc': { get: {} },
    [ERRORS_PAGE_PATH]: { get: {} },
    '/favicon.ico': { get: {} },
  });
  // The API explorer shares the dashboard's origin: it may not be framed (its "Try it out" acts with
  // the credentials entered), and it keeps them for the tab only (no persistAuthorization: they
  // would stay in localStorage after the tab is closed).
  expressApp.use('/docs', (_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    useGlobalPrefix: false,
    customSiteTitle: 'Test Management Service API',
    // validatorUrl: null — Swagger UI would otherwise load a badge from validator.swagger.io (the
    // page must work offline, and it would hand the document's address to a third party).
    swaggerOptions: { persistAuthorization: false, displayRequestDuration: true, validatorUrl: null },
  });
  const redocDir = dirname(require.resolve('redoc/bundles/redoc.standalone.js'));
  expressApp.use(
    '/redoc',
    express.static(redocDir, { index: false, redirect: false, maxAge: '1d' }),
  );
  const redocPage = redocHtml();
  const errorsPage = errorsPageHtml();
  // Outside /api/v1 Nest has no not-found handler: unknown paths and wrong methods become problems
  // too. The ReDoc page, the error catalogue page and the favicon are answered here as well (one
  // layer less for every API request).
  const filter = app.get(ProblemFilter);
  const prefix = `/${API_PREFIX}`;
  expressApp.use((req: Request, res: Response, next: NextFunction) => {
    const path = req.path;
    if (path === prefix || path.startsWith(`${prefix}/`)) return next();
    const read = req.method === 'GET' || req.method === 'HEAD';
    if (read && (path === '/redoc' || path === '/redoc/')) {
      res.setHeader('Content-Security-Policy', REDOC_CSP);
      res.type('html').send(redocPage);
      return;
    }
    if (read && path === ERRORS_PAGE_PATH) {
      res.type('html').send(errorsPage);
      return;
    }
    if (read && webApp?.handle(req, res)) return;
    if (read && path === '/favicon.ico') {
      res.setHeader('Cache-Control', 'public, max-age=86400');
      res.type(FAVICON_CONTENT_TYPE).send(FAVICON_ICO);
      return;
    }
    const allowed = allowedMethodsFor(path);
    if (allowed.includes(req.method)) return next();
    const p = filter.toProblem(new NotFoundException(), req);
    res.status(p.status);
    for (const [k, v] of Object.entries(p.headers)) res.setHeader(k, v);
    res.type('application/problem+json').send(JSON.stringify(p.body));
  });
  return app;
}
