import 'reflect-metadata';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { AppModule } from '../../src/app.module';
import { isTransactional } from '../../src/common/persistence/transaction.interceptor';
import { loadConfig } from '../../src/config/config';

const SRC = join(__dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('framework conventions (issue #16: no patches of framework internals)', () => {
  const files = sourceFiles(SRC);
  type ControllerClass = new () => object;
  const controllers: ControllerClass[] = [];

  beforeAll(async () => {
    for (const file of files.filter((f) => f.endsWith('.controller.ts'))) {
      const exported = Object.values((await import(file)) as Record<string, unknown>);
      controllers.push(
        ...exported.filter((v): v is ControllerClass => typeof v === 'function' && /Controller$/.test(v.name)),
      );
    }
  });

  it('finds the sources and controllers it checks', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(controllers.length).toBeGreaterThan(15);
  });

  describe('transactions', () => {
    let doc: OpenAPIObject;

    beforeAll(async () => {
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
      // The operation id names the handler: `ProjectsController.create`.
      doc = SwaggerModule.createDocument(app, new DocumentBuilder().build(), {
        operationIdFactory: (controller: string, method: string) => `${controller}.${method}`,
      });
      await app.close();
    });

    it('every POST, PUT, PATCH and DELETE handler is @Transactional(), no GET handler is', () => {
      const byName = new Map(controllers.map((c) => [c.name, c]));
      const wrong: string[] = [];
      const routed = new Set<string>();
      let writes = 0;
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [verb, op] of Object.entries(item as Record<string, { operationId?: string }>)) {
          if (!['get', 'post', 'put', 'patch', 'delete'].includes(verb)) continue;
          const id = String(op.operationId);
          const [controller, method] = id.split('.');
          const handler = (byName.get(controller)?.prototype as Record<string, object> | undefined)?.[method];
          if (handler === undefined) throw new Error(`no handler ${id} for ${verb} ${path}`);
          routed.add(id);
          if (verb !== 'get') writes++;
          if (isTransactional(handler) !== (verb !== 'get')) wrong.push(`${verb.toUpperCase()} ${path} (${id})`);
        }
      }
      // A transactional handler the document does not show (an excluded controller) is no write route.
      for (const controller of controllers) {
        const proto = controller.prototype as Record<string, object>;
        for (const method of Object.getOwnPropertyNames(proto)) {
          const id = `${controller.name}.${method}`;
          if (method !== 'constructor' && isTransactional(proto[method]) && !routed.has(id)) wrong.push(id);
        }
      }
      expect(wrong).toEqual([]);
      expect(writes).toBeGreaterThan(50);
      expect(routed.size - writes).toBeGreaterThan(40);
    });
  });
});
