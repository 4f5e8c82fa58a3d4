import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AppModule } from '../../src/app.module';
import { loadConfig } from '../../src/config/config';

/**
 * The application in Nest's preview mode: every module, controller and route declared, no provider
 * instantiated and no database connection, so unit tests can read the routes and build the OpenAPI
 * document without a PostgreSQL. `read` gets the app with the `api/v1` prefix set; the app is closed
 * after it.
 */
export async function withPreviewApp(
  read: (app: INestApplication) => OpenAPIObject,
): Promise<OpenAPIObject> {
  const config = loadConfig(
    {
      AUTH_SECRET: 'x'.repeat(40),
      DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
      LOG_LEVEL: 'silent',
    },
    { persistSecret: false },
  );
  const app = await NestFactory.create(AppModule.forRoot(config, config.databaseUrl as string), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  try {
    app.setGlobalPrefix('api/v1', { exclude: ['healthz', 'readyz', 'metrics'] });
    return read(app);
  } finally {
    await app.close();
  }
}
