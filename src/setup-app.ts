import { dirname } from 'node:path';
import { type INestApplication, NotFoundException } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import express, { NextFunction, Request, RequestHandler, Response } from 'express';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import { APP_CONFIG, AppConfig } from './config/config';
import { ProblemFilter } from './common/errors/problem.filter';
import { HTTP_LOGGER } from './common/http/logging';
import { MetricsService } from './common/http/metrics.service';
import {
  deferBodyErrors,
  jsonDepthMiddleware,
  mediaTypeMiddleware,
  metricsMiddleware,
  optionsMiddleware,
  requestIdMiddleware,
  takesBody,
} from './common/http/middleware';
import { installRawJsonResponses } from './common/http/raw-json';
import { allowedMethodsFor, registerRoutes } from './common/http/route-table';
import { buildOpenApiDocument, redocHtml } from './common/openapi/openapi';
import { RequestValidationPipe } from './common/validation/validate';

export const API_PREFIX = 'api/v1';

/**
 * Everything between NestFactory.create and listen, shared by main.ts, the tests and the OpenAPI
 * generator: middleware order, prefix, validation, the problem filter, Swagger UI and ReDoc.
 */
export function setupApp(app: NestExpressApplication | INestApplication): INestApplication {
  const config = app.get<AppConfig>(APP_CONFIG);
  const expressApp = app as NestExpressApplication;
  const metrics = app.get(MetricsService);

  try {
    expressApp.useLogger(app.get(PinoNestLogger));
  } catch {
    // tests may run without the pino module
  }
  expressApp.disable('x-powered-by');
  // No ETags: hashing every (multi-megabyte) JSON body costs CPU on each request for a 304 that
  // API clients do not ask for.
  expressApp.set('etag', false);
  expressApp.set('query parser', 'simple');
  // res.json splices JSON text read from the database (RawJson) instead of re-serialising it.
  installRawJsonResponses(expressApp.getHttpAdapter().getInstance() as { response: object });

  expressApp.use(requestIdMiddleware);
  expressApp.use(app.get<RequestHandler>(HTTP_LOGGER));
  expressApp.use(metricsMiddleware(metrics));
  if (config.corsOrigins.length > 0) {
    expressApp.enableCors({
      origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
      exposedHeaders: ['X-Request-Id', 'Content-Disposition', 'Allow', 'Retry-After'],
      maxAge: 600,
    });
  }
  expressApp.use(optionsMiddleware);
  expressApp.use(mediaTypeMiddleware);
  // Only bodies of POST, PUT and PATCH are read: a body on GET, HEAD, DELETE or OPTIONS is ignored.
  const json = express.json({
    limit: config.maxJsonBytes,
    type: ['application/json', 'application/*+json'],
    strict: true,
  });
  expressApp.use((req: Request, res: Response, next: NextFunction) =>
    takesBody(req) && req.deferredError === undefined ? json(req, res, next) : next(),
  );
  // Body-parser failures (413, malformed JSON) are raised by the RolesGuard after authentication.
  expressApp.use(deferBodyErrors);
  expressApp.use(jsonDepthMiddleware);

  app.setGlobalPrefix(API_PREFIX, { exclude: ['healthz', 'readyz', 'metrics'] });
  app.useGlobalPipes(new RequestValidationPipe());
  app.useGlobalFilters(app.get(ProblemFilter));

  const document = buildOpenApiDocument(app);
  registerRoutes({
    ...(document.paths as Record<string, Record<string, unknown>>),
    '/healthz': { get: {} },
    '/readyz': { get: {} },
    '/metrics': { get: {} },
    '/openapi.json': { get: {} },
    '/docs': { get: {} },
    '/redoc': { get: {} },
  });
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    useGlobalPrefix: false,
    customSiteTitle: 'Test Management Service API',
    swaggerOptions: { persistAuthorization: true, displayRequestDuration: true },
  });
  const redocDir = dirname(require.resolve('redoc/bundles/redoc.standalone.js'));
  expressApp.use(
    '/redoc',
    express.static(redocDir, { index: false, redirect: false, maxAge: '1d' }),
  );
  const redocPage = redocHtml();
  expressApp.use((req: Request, res: Response, next: () => void) => {
    if (req.method === 'GET' && (req.path === '/redoc' || req.path === '/redoc/')) {
      res.type('html').send(redocPage);
      return;
    }
    next();
  });
  // Outside /api/v1 Nest has no not-found handler: unknown paths and wrong methods become problems too.
  const filter = app.get(ProblemFilter);
  const prefix = `/${API_PREFIX}`;
  expressApp.use((req: Request, res: Response, next: NextFunction) => {
    const path = req.path;
    if (path === prefix || path.startsWith(`${prefix}/`)) return next();
    const allowed = allowedMethodsFor(path);
    if (allowed.includes(req.method)) return next();
    const p = filter.toProblem(new NotFoundException(), req);
    res.status(p.status);
    for (const [k, v] of Object.entries(p.headers)) res.setHeader(k, v);
    res.type('application/problem+json').send(JSON.stringify(p.body));
  });
  return app;
}
