import { dirname } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import express, { Request, Response } from 'express';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import { APP_CONFIG, AppConfig } from './config/config';
import { ProblemFilter } from './common/errors/problem.filter';
import { AppException } from './common/errors/app-exception';
import { MetricsService } from './common/http/metrics.service';
import { mediaTypeMiddleware, metricsMiddleware, requestIdMiddleware } from './common/http/middleware';
import { registerRoutes } from './common/http/route-table';
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
  const filter = app.get(ProblemFilter);
  const metrics = app.get(MetricsService);

  try {
    expressApp.useLogger(app.get(PinoNestLogger));
  } catch {
    // tests may run without the pino module
  }
  expressApp.disable('x-powered-by');
  expressApp.set('query parser', 'simple');

  const reject = (req: Request, res: Response, exception: unknown) => {
    const p = filter.toProblem(exception, req);
    res.status(p.status);
    for (const [k, v] of Object.entries(p.headers)) res.setHeader(k, v);
    res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
    res.send(JSON.stringify(p.body));
  };

  expressApp.use(requestIdMiddleware);
  expressApp.use(metricsMiddleware(metrics));
  if (config.corsOrigins.length > 0) {
    expressApp.enableCors({ origin: config.corsOrigins, exposedHeaders: ['X-Request-Id', 'Content-Disposition'] });
  }
  expressApp.use(
    mediaTypeMiddleware((req, res, detail) => reject(req, res, new AppException('unsupported_media_type', detail))),
  );
  expressApp.use(express.json({ limit: config.maxJsonBytes, type: ['application/json', 'application/*+json'], strict: true }));
  // Body-parser failures (413, malformed JSON) become problems before routing.
  expressApp.use((err: unknown, req: Request, res: Response, next: (e?: unknown) => void) => {
    if (!err) return next();
    reject(req, res, err);
  });

  app.setGlobalPrefix(API_PREFIX, { exclude: ['healthz', 'readyz', 'metrics'] });
  app.useGlobalPipes(new RequestValidationPipe());
  app.useGlobalFilters(filter);

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
  expressApp.use('/redoc', express.static(redocDir, { index: false, redirect: false, maxAge: '1d' }));
  const redocPage = redocHtml();
  expressApp.use((req: Request, res: Response, next: () => void) => {
    if (req.method === 'GET' && (req.path === '/redoc' || req.path === '/redoc/')) {
      res.type('html').send(redocPage);
      return;
    }
    next();
  });
  return app;
}
