import 'reflect-metadata';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import ts from 'typescript';
import { isTransactional } from '../../src/common/persistence/transaction.interceptor';
import { requestPartsOf } from '../../src/common/validation/request-parts';
import { withPreviewApp } from '../support/preview-app';
import { isDtoClass } from '../../src/common/validation/validate';

const SRC = join(__dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [path] : [];
  });
}

interface Import {
  file: string;
  from: string;
  names: string[];
}

/** Every `import … from '…'` of the files, with the names it binds (as exported). */
function importsOf(files: string[]): Import[] {
  return files.flatMap((file) => {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    return source.statements.filter(ts.isImportDeclaration).map((d) => {
      const bindings = d.importClause?.namedBindings;
      const names =
        bindings && ts.isNamedImports(bindings)
          ? bindings.elements.map((e) => (e.propertyName ?? e.name).text)
          : [];
      return {
        file: relative(SRC, file),
        from: (d.moduleSpecifier as ts.StringLiteral).text,
        names,
      };
    });
  });
}

/** A package path below a framework's entry point (`@nestjs/common/constants`, `pg/lib/client`…). */
export function isFrameworkInternal(specifier: string): boolean {
  return /^(@nestjs\/[^/]+|express|typeorm|pg|pg-pool)\/./.test(specifier);
}

/** Controllers that bind a body or query with Nest's own decorator, which the guard does not see. */
export function nestBodyOrQueryImports(imports: Import[]): string[] {
  return imports
    .filter((i) => i.from === '@nestjs/common' && i.file !== 'common/validation/request-parts.ts')
    .flatMap((i) =>
      i.names.filter((n) => n === 'Body' || n === 'Query').map((n) => `${i.file}: ${n}`),
    );
}

/**
 * Assignments that replace a method of a stream or request object (`req.pipe = …`, `x['unpipe'] = …`)
 * or read a function's source text (`Function.prototype.toString`): ways of patching what a framework
 * hands over, instead of using its options.
 */
export function streamPatches(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const patched = new Set(['pipe', 'unpipe', 'write', 'end', 'emit', 'on', 'json', 'send']);
  const nameOf = (e: ts.Expression): string | null =>
    ts.isPropertyAccessExpression(e)
      ? e.name.text
      : ts.isElementAccessExpression(e) && ts.isStringLiteral(e.argumentExpression)
        ? e.argumentExpression.text
        : null;
  const visit = (node: ts.Node): void => {
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      patched.has(nameOf(node.left) ?? '')
    ) {
      found.push(`${file}: ${node.left.getText(source)} =`);
    }
    if (
      ts.isPropertyAccessExpression(node) &&
      node.getText(source) === 'Function.prototype.toString'
    ) {
      found.push(`${file}: Function.prototype.toString`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('framework conventions (issue #16: no patches of framework internals)', () => {
  const files = sourceFiles(SRC);
  const imports = importsOf(files);
  type ControllerClass = new () => object;
  const controllers: ControllerClass[] = [];

  beforeAll(async () => {
    for (const file of files.filter((f) => f.endsWith('.controller.ts'))) {
      const exported = Object.values((await import(file)) as Record<string, unknown>);
      controllers.push(
        ...exported.filter(
          (v): v is ControllerClass => typeof v === 'function' && /Controller$/.test(v.name),
        ),
      );
    }
  });

  it('finds the sources and controllers it checks', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(controllers.length).toBeGreaterThan(15);
  });

  it('no source file imports an internal module of Nest, Express, TypeORM or pg', () => {
    expect(
      imports.filter((i) => isFrameworkInternal(i.from)).map((i) => `${i.file}: ${i.from}`),
    ).toEqual([]);
  });

  it("no source file replaces a method of a stream or request, or reads a function's source", () => {
    expect(files.flatMap((f) => streamPatches(relative(SRC, f), readFileSync(f, 'utf8')))).toEqual(
      [],
    );
  });

  it.each([
    ['req.pipe = (dest) => dest;', ['x.ts: req.pipe =']],
    ["patched['unpipe'] = () => undefined;", ["x.ts: patched['unpipe'] ="]],
    ['res.json = function json() {};', ['x.ts: res.json =']],
    ['/^class/.test(Function.prototype.toString.call(C));', ['x.ts: Function.prototype.toString']],
    ['source.pipe(decoder.input); const pipe = req.pipe;', []],
    ['options.streamHandler = feed.start;', []],
  ])('streamPatches(%s)', (text, expected) => {
    expect(streamPatches('x.ts', text)).toEqual(expected);
  });

  it.each([
    ['@nestjs/common/constants', true],
    ['@nestjs/core/router/router-explorer', true],
    ['typeorm/driver/postgres/PostgresDriver', true],
    ['pg/lib/client', true],
    ['express/lib/request', true],
    ['@nestjs/common', false],
    ['typeorm', false],
    ['pg', false],
    ['pg-protocol', false],
  ])('isFrameworkInternal(%s) is %p', (specifier, expected) => {
    expect(isFrameworkInternal(specifier)).toBe(expected);
  });

  it("controllers take @Body() and @Query() from common/validation/request-parts, never Nest's", () => {
    // Nest's would bind the argument without the guard validating it before its 404/403 checks.
    expect(nestBodyOrQueryImports(imports)).toEqual([]);
    expect(
      nestBodyOrQueryImports([
        {
          file: 'modules/x/x.controller.ts',
          from: '@nestjs/common',
          names: ['Controller', 'Body'],
        },
        { file: 'modules/x/y.controller.ts', from: '@nestjs/common', names: ['Query'] },
      ]),
    ).toEqual(['modules/x/x.controller.ts: Body', 'modules/x/y.controller.ts: Query']);
  });

  it('every DTO argument of a controller method is bound by our @Body() or @Query()', () => {
    const unbound: string[] = [];
    let dtoArguments = 0;
    for (const controller of controllers) {
      const proto = controller.prototype as Record<string, unknown>;
      for (const method of Object.getOwnPropertyNames(proto)) {
        if (method === 'constructor' || typeof proto[method] !== 'function') continue;
        const types = (Reflect.getMetadata('design:paramtypes', proto, method) ?? []) as unknown[];
        const bound = new Set(requestPartsOf(proto, method).map((p) => p.index));
        types.forEach((type, index) => {
          if (!isDtoClass(type)) return;
          dtoArguments++;
          if (!bound.has(index))
            unbound.push(`${controller.name}.${method} argument ${index} (${type.name})`);
        });
      }
    }
    expect(unbound).toEqual([]);
    expect(dtoArguments).toBeGreaterThan(60);
  });

  describe('transactions', () => {
    let doc: OpenAPIObject;

    beforeAll(async () => {
      // The operation id names the handler: `ProjectsController.create`.
      doc = await withPreviewApp((app) =>
        SwaggerModule.createDocument(app, new DocumentBuilder().build(), {
          operationIdFactory: (controller: string, method: string) => `${controller}.${method}`,
        }),
      );
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
          const handler = (
            byName.get(controller)?.prototype as Record<string, object> | undefined
          )?.[method];
          if (handler === undefined) throw new Error(`no handler ${id} for ${verb} ${path}`);
          routed.add(id);
          if (verb !== 'get') writes++;
          if (isTransactional(handler) !== (verb !== 'get'))
            wrong.push(`${verb.toUpperCase()} ${path} (${id})`);
        }
      }
      // A transactional handler the document does not show (an excluded controller) is no write route.
      for (const controller of controllers) {
        const proto = controller.prototype as Record<string, object>;
        for (const method of Object.getOwnPropertyNames(proto)) {
          const id = `${controller.name}.${method}`;
          if (method !== 'constructor' && isTransactional(proto[method]) && !routed.has(id))
            wrong.push(id);
        }
      }
      expect(wrong).toEqual([]);
      expect(writes).toBeGreaterThan(50);
      expect(routed.size - writes).toBeGreaterThan(40);
    });
  });
});
