/**
 * Parser fuzz (issue #22): generated JUnit XML and results JSON documents — random nesting,
 * attributes, text, entities, CDATA, comments, declarations, random truncation, nesting beyond the
 * limits, huge values. The property: the reader either returns a report or throws its documented
 * parse error (`JunitParseError` / `ResultsJsonError`), never another exception and never a stack
 * overflow, within a bounded time, and with heap growth bounded by a multiple of the input size.
 *
 * A fixed seed when `CI` is set, a random one otherwise; fast-check prints the seed (and the path
 * of the failing case) in its error message, so a local failure can be replayed with
 * `fc.assert(..., { seed, path })`.
 */
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';

import {
  JunitParseError,
  MAX_JUNIT_ATTRIBUTE_CHARS,
  MAX_JUNIT_ELEMENT_DEPTH,
  MAX_JUNIT_SUITE_DEPTH,
  parseJunit,
  type ParsedReport,
} from './junit/junit-parser';
import {
  MAX_RESULTS_JSON_DEPTH,
  parseResultsJson,
  ResultsJsonError,
  Utf8Text,
} from './results-json/results-json';

const SEED = process.env.CI ? 22_2022 : undefined;
/** Longest accepted time for one parse of a generated input (all are at most a few MB). */
const MAX_PARSE_MS = 2000;
/** Heap a parse may keep per byte of input, plus a constant. */
const HEAP_PER_BYTE = 48;
const HEAP_SLACK = 32 * 1024 * 1024;

function runs(numRuns: number): fc.Parameters<unknown> {
  return { seed: SEED, numRuns, endOnFailure: true };
}

/** A collector that may be called between measurements (the V8 flag is public and documented). */
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

// ---------------------------------------------------------------------------------------------
// Generated XML

const ELEMENTS = [
  'testsuites',
  'testsuite',
  'testcase',
  'failure',
  'error',
  'skipped',
  'flakyFailure',
  'rerunError',
  'stackTrace',
  'system-out',
  'system-err',
  'properties',
  'property',
  'ns:testcase',
  'x',
] as const;
const ATTRIBUTES = [
  'name',
  'classname',
  'message',
  'type',
  'time',
  'value',
  'status',
  'result',
  'timestamp',
  'file',
  'line',
  'xmlns:ns',
] as const;
const PROPERTY_NAMES = [
  'automation_id',
  'tms_test_title',
  'tms_suite_path',
  'tms_dataset_key',
  'p',
];

/** Pieces of text, well-formed or not: entities (known, numeric, unknown), markup characters. */
const textPiece = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.string({ unit: 'binary', maxLength: 10 }),
  fc.constantFrom(
    '&amp;',
    '&lt;',
    '&gt;',
    '&quot;',
    '&apos;',
    '&#233;',
    '&#x263A;',
    '&#0;',
    '&#xD800;',
    '&#99999999;',
    '&bogus;',
    '&',
    '<',
    '>',
    '"',
    "'",
    ']]>',
    '\u0000',
    '\uFFFF',
    '\uD800',
    ' ',
    '\n',
    '1.5',
    '2024-05-01T10:00:00Z',
    '[XPASS(strict)] x',
    'pytest.xfail',
    'automation_id',
  ),
);
const text = fc.array(textPiece, { maxLength: 6 }).map((parts) => parts.join(''));
const attributeValue = fc.oneof(
  { weight: 8, arbitrary: text },
  { weight: 1, arbitrary: fc.constant('') },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: MAX_JUNIT_ATTRIBUTE_CHARS - 2, max: MAX_JUNIT_ATTRIBUTE_CHARS + 2 })
      .map((n) => 'a'.repeat(n)),
  },
);
const attributes = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...ATTRIBUTES), fc.constantFrom(...PROPERTY_NAMES)),
      attributeValue,
      fc.constantFrom('"', "'"),
    ),
    { maxLength: 4 },
  )
  .map((list) => list.map(([name, value, quote]) => ` ${name}=${quote}${value}${quote}`).join(''));

type Node =
  | { kind: 'element'; name: string; attrs: string; children: Node[] }
  | { kind: 'text'; value: string }
  | { kind: 'raw'; value: string };

const tree = fc.letrec<{ node: Node; element: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', maxDepth: 5, withCrossShrink: true },
    { weight: 3, arbitrary: text.map((value): Node => ({ kind: 'text', value })) },
    { weight: 3, arbitrary: tie('element') },
    {
      weight: 1,
      arbitrary: fc
        .oneof(
          text.map((t) => `<![CDATA[${t}]]>`),
          text.map((t) => `<!--${t}-->`),
          fc.constantFrom(
            '<?pi data?>',
            '<!DOCTYPE x>',
            '<!ENTITY e "x">',
            '<!-- a -- b -->',
            '</testsuite>',
            '<testcase',
            '<![CDATA[',
          ),
        )
        .map((value): Node => ({ kind: 'raw', value })),
    },
  ),
  element: fc
    .record({
      name: fc.constantFrom(...ELEMENTS),
      attrs: attributes,
      children: fc.array(tie('node'), { maxLength: 4 }),
    })
    .map((e): Node => ({ kind: 'element', ...e })),
}));

/** Serialises a generated tree without recursion (the trees are small, but keep the habit). */
function serialise(root: Node): string {
  const out: string[] = [];
  const stack: Array<Node | string> = [root];
  while (stack.length > 0) {
    const item = stack.pop() as Node | string;
    if (typeof item === 'string') {
      out.push(item);
    } else if (item.kind !== 'element') {
      out.push(item.value);
    } else if (item.children.length === 0) {
      out.push(`<${item.name}${item.attrs}/>`);
    } else {
      out.push(`<${item.name}${item.attrs}>`);
      stack.push(`</${item.name}>`);
      for (let i = item.children.length - 1; i >= 0; i--) stack.push(item.children[i] as Node);
    }
  }
  return out.join('');
}

const document = fc
  .record({
    prolog: fc.constantFrom(
      '',
      '<?xml version="1.0" encoding="UTF-8"?>\n',
      '<?xml version="1.0" encoding="ISO-8859-1"?>',
      '<?xml version="1.0" encoding="bogus"?>',
      '\uFEFF',
    ),
    root: fc.constantFrom('testsuites', 'testsuite', 'x'),
    rootAttrs: attributes,
    body: fc.array(tree.element, { maxLength: 4 }),
    /** Suites wrapped around the body: none, around the limit, or far beyond it. */
    wrap: fc.oneof(
      { weight: 4, arbitrary: fc.constant(0) },
      {
        weight: 1,
        arbitrary: fc.integer({ min: MAX_JUNIT_SUITE_DEPTH - 2, max: MAX_JUNIT_SUITE_DEPTH + 2 }),
      },
      {
        weight: 1,
        arbitrary: fc.integer({ min: MAX_JUNIT_ELEMENT_DEPTH - 2, max: 20_000 }),
      },
    ),
    wrapper: fc.constantFrom('<testsuite name="s">', '<testsuite>', '<x>'),
    /** Keep only a prefix of the document (1 = all of it). */
    cut: fc.oneof(
      { weight: 4, arbitrary: fc.constant(1) },
      { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) },
    ),
  })
  .map((shape) => ({ ...shape, body: shape.body.map(serialise).join('\n') }));

/** Builds the document inside the property, so that a counterexample prints its shape, not megabytes. */
function build(shape: {
  prolog: string;
  root: string;
  rootAttrs: string;
  body: string;
  wrap: number;
  wrapper: string;
  cut: number;
}): string {
  const { prolog, root, rootAttrs, body, wrap, wrapper, cut } = shape;
  const close = `</${wrapper.slice(1, wrapper.search(/[ >]/))}>`;
  const full = `${prolog}<${root}${rootAttrs}>${wrapper.repeat(wrap)}${body}${close.repeat(wrap)}</${root}>`;
  return full.slice(0, Math.floor(full.length * cut));
}

/** The same document as a string, UTF-8 bytes, UTF-16 bytes with a BOM, or a chunked stream. */
const delivery = fc.constantFrom('string', 'utf8', 'utf16', 'stream');

function deliver(doc: string, how: string, chunk: number): string | Buffer | Readable {
  if (how === 'string') return doc;
  if (how === 'utf16')
    return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(doc, 'utf16le')]);
  const bytes = Buffer.from(doc, 'utf8');
  if (how === 'utf8') return bytes;
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunk) chunks.push(bytes.subarray(i, i + chunk));
  return Readable.from(chunks);
}

/** Parses; a report or a JunitParseError, anything else fails the property. */
async function parseOrRefuse(input: string | Buffer | Readable): Promise<ParsedReport | null> {
  try {
    return await parseJunit(input);
  } catch (error) {
    if (error instanceof JunitParseError) return null;
    throw error;
  }
}

function checkReport(report: ParsedReport | null): void {
  if (report === null) return;
  expect(report.results.length).toBeLessThanOrEqual(report.testcase_elements);
  expect(report.totals.total).toBe(report.results.length);
  for (const result of report.results) {
    expect(result.name.trim()).not.toBe('');
    expect(result.suite_path.length).toBeLessThanOrEqual(4);
  }
}

describe('parser fuzz: JUnit XML', () => {
  it('returns a report or a JunitParseError for any generated document, in bounded time', async () => {
    await fc.assert(
      fc.asyncProperty(
        document,
        delivery,
        fc.integer({ min: 1, max: 4096 }),
        async (shape, how, chunk) => {
          const started = performance.now();
          checkReport(await parseOrRefuse(deliver(build(shape), how, chunk)));
          expect(performance.now() - started).toBeLessThan(MAX_PARSE_MS);
        },
      ),
      runs(300),
    );
  });

  it('keeps every testcase of a well-formed report, nameless ones included', async () => {
    const testcase = fc.record({
      name: fc.option(fc.constantFrom('', '  ', 'a', 'b', 'test_x'), { nil: undefined }),
      classname: fc.option(fc.constantFrom('', 'k.C', 'k.D'), { nil: undefined }),
      outcome: fc.constantFrom('', '<failure/>', '<error/>', '<skipped/>'),
    });
    const suite = fc.record({
      name: fc.option(fc.constantFrom('', 'A', 'B'), { nil: undefined }),
      testcases: fc.array(testcase, { maxLength: 6 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(suite, { maxLength: 5 }), async (suites) => {
        const attr = (key: string, value: string | undefined): string =>
          value === undefined ? '' : ` ${key}="${value}"`;
        const doc = `<testsuites>${suites
          .map(
            (s) =>
              `<testsuite${attr('name', s.name)}>${s.testcases
                .map(
                  (t) =>
                    `<testcase${attr('name', t.name)}${attr('classname', t.classname)}>${t.outcome}</testcase>`,
                )
                .join('')}</testsuite>`,
          )
          .join('')}</testsuites>`;
        const report = await parseJunit(doc);
        // Every element is a result or an attempt of one (a named retry), none is dropped.
        const elements = report.results.reduce((sum, r) => sum + r.elements, 0);
        expect(elements).toBe(report.testcase_elements);
        // Nameless testcases never fold into one another: each is a result of its own.
        const generated = new Set(
          report.nameless_testcases.map((t) => JSON.stringify([t.suite_path, t.classname, t.name])),
        );
        expect(generated.size).toBe(report.nameless_testcases.length);
      }),
      runs(200),
    );
  });

  it('grows the heap by a bounded multiple of the input size on big generated inputs', async () => {
    /** Big shapes: deep bombs, wide trees, long paths, inherited properties, nameless testcases. */
    const builders: Record<string, (n: number) => string> = {
      deepSuites: (n) =>
        `<testsuites>${'<testsuite name="s">'.repeat(n)}<testcase name="t"/>${'</testsuite>'.repeat(n)}</testsuites>`,
      deepMarkup: (n) =>
        `<testsuite><testcase name="a"><failure>${'<b>'.repeat(n)}${'</b>'.repeat(n)}</failure></testcase></testsuite>`,
      longPaths: (n) => {
        const chain = Array.from(
          { length: MAX_JUNIT_SUITE_DEPTH - 1 },
          (_, i) => `<testsuite name="${'n'.repeat(200)}${i}">`,
        );
        const leaves = '<testsuite name="leaf"><testcase name="t"/></testsuite>'.repeat(n / 4);
        return `<testsuites>${chain.join('')}${leaves}${'</testsuite>'.repeat(chain.length)}</testsuites>`;
      },
      inherited: (n) => {
        const recognised = ['automation_id', 'tms_steps', 'tms_suite_path', 'tms_dataset_key']
          .map((p) => `<property name="${p}" value="${'v'.repeat(4000)}"/>`)
          .join('');
        const other = '<property name="java.x" value="y"/>'.repeat(200);
        const cases = '<testcase classname="k"/>'.repeat(n / 2);
        return `<testsuite name="S"><properties>${recognised}${other}</properties>${cases}</testsuite>`;
      },
      nameless: (n) =>
        `<testsuites><testsuite>${'<testcase><failure/></testcase>'.repeat(n / 2)}</testsuite></testsuites>`,
      named: (n) =>
        `<testsuite name="S">${Array.from({ length: n / 2 }, (_, i) => `<testcase classname="c" name="t${i}"/>`).join('')}</testsuite>`,
    };
    const big = fc.tuple(
      fc.constantFrom(...Object.keys(builders)),
      fc.integer({ min: 5_000, max: 30_000 }),
    );
    await fc.assert(
      fc.asyncProperty(big, async ([kind, n]) => {
        const bytes = Buffer.from((builders[kind] as (n: number) => string)(n), 'utf8');
        collect();
        const before = process.memoryUsage().heapUsed;
        const started = performance.now();
        const report = await parseOrRefuse(bytes);
        const elapsed = performance.now() - started;
        collect(); // what the parse keeps (the report is still referenced below)
        const growth = process.memoryUsage().heapUsed - before;
        checkReport(report);
        expect(elapsed).toBeLessThan(MAX_PARSE_MS);
        // Generous: a result keeps about 600 bytes (the smallest testcase is about 25 bytes);
        // nothing grows with the nesting depth or with inherited properties.
        expect(growth).toBeLessThan(HEAP_PER_BYTE * bytes.length + HEAP_SLACK);
      }),
      runs(6),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Generated results JSON

const jsonCase = fc.record(
  {
    name: fc.oneof(fc.string({ maxLength: 10 }), fc.constant(''), fc.integer(), fc.constant(null)),
    status: fc.oneof(
      fc.constantFrom(
        'passed',
        'failure',
        'error',
        'skipped',
        'xfailed',
        'xpassed',
        ' passed ',
        'PASSED',
        'bogus',
      ),
      fc.integer(),
    ),
    title: fc.oneof(fc.string({ maxLength: 10 }), fc.constant(null)),
    classname: fc.string({ unit: 'binary', maxLength: 10 }),
    suite_path: fc.oneof(
      fc.array(fc.string({ maxLength: 5 }), { maxLength: 5 }),
      fc.string(),
      fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
    ),
    automation_id: fc.oneof(fc.string({ maxLength: 10 }), fc.constant('a'.repeat(70_000))),
    dataset_key: fc.string({ maxLength: 5 }),
    dataset_data: fc.oneof(fc.object({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 2 })),
    duration_ms: fc.oneof(fc.integer(), fc.double(), fc.constant(-1), fc.constant(2 ** 31)),
    message: fc.oneof(fc.string({ maxLength: 20 }), fc.constant('m'.repeat(70_000))),
    details: fc.string({ unit: 'grapheme', maxLength: 20 }),
    system_out: fc.jsonValue({ maxDepth: 1 }),
  },
  { requiredKeys: [] },
);

const jsonDocument = fc
  .record({
    doc: fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .record(
            {
              run_name: fc.option(fc.string()),
              timestamp: fc.option(
                fc.oneof(fc.string(), fc.constant('2024-05-01T10:00:00Z'), fc.integer()),
              ),
              cases: fc.oneof(fc.array(jsonCase, { maxLength: 5 }), fc.jsonValue({ maxDepth: 2 })),
            },
            { requiredKeys: [] },
          )
          .map((d) => JSON.stringify(d)),
      },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            fc.integer({ min: MAX_RESULTS_JSON_DEPTH - 3, max: 5_000 }),
            fc.constantFrom('[', '{"a":'),
            fc.boolean(),
          )
          .map(([depth, open, closed]) => {
            const close = open === '[' ? ']' : '}';
            const inner = '{"cases":[{"name":"a","status":"passed","dataset_data":';
            return `${inner}${open.repeat(depth)}1${closed ? close.repeat(depth) : ''}}]}`;
          }),
      },
      { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
    ),
    cut: fc.oneof(
      { weight: 4, arbitrary: fc.constant(1) },
      { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) },
    ),
  })
  .map(({ doc, cut }) => doc.slice(0, Math.floor(doc.length * cut)));

function parseJsonOrRefuse(text: string): ParsedReport | null {
  try {
    return parseResultsJson(text);
  } catch (error) {
    if (error instanceof ResultsJsonError) return null;
    throw error;
  }
}

describe('parser fuzz: results JSON', () => {
  it('returns a report or a ResultsJsonError for any generated document, in bounded time', async () => {
    await fc.assert(
      fc.property(jsonDocument, (text) => {
        const started = performance.now();
        checkReport(parseJsonOrRefuse(text));
        expect(performance.now() - started).toBeLessThan(MAX_PARSE_MS);
      }),
      runs(300),
    );
  });

  it('decodes any bytes or refuses them as not UTF-8', async () => {
    await fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 20 }), { maxLength: 5 }), (chunks) => {
        const decoder = new Utf8Text();
        for (const chunk of chunks) decoder.push(chunk);
        try {
          parseJsonOrRefuse(decoder.end());
        } catch (error) {
          if (!(error instanceof ResultsJsonError)) throw error;
        }
      }),
      runs(200),
    );
  });

  it('grows the heap by a bounded multiple of the input size on big generated inputs', async () => {
    const builders: Record<string, (n: number) => string> = {
      emptyObjects: (n) => `{"cases":[${'{},'.repeat(n)}{}]}`,
      deepArrays: (n) => `${'['.repeat(n)}${']'.repeat(n)}`,
      cases: (n) =>
        JSON.stringify({
          cases: Array.from({ length: n / 20 }, (_, i) => ({
            name: `t${i % 7}`,
            status: 'failure',
            suite_path: ['a', 'b'],
            message: 'm',
          })),
        }),
      zeros: (n) => `{"cases":[${'0,'.repeat(n)}0]}`,
      strings: (n) => `{"cases":[${'"",'.repeat(n)}""]}`,
    };
    const big = fc.tuple(
      fc.constantFrom(...Object.keys(builders)),
      fc.integer({ min: 50_000, max: 1_500_000 }),
    );
    await fc.assert(
      fc.property(big, ([kind, n]) => {
        const text = (builders[kind] as (n: number) => string)(n);
        collect();
        const before = process.memoryUsage().heapUsed;
        const started = performance.now();
        const report = parseJsonOrRefuse(text);
        const elapsed = performance.now() - started;
        collect(); // what the parse keeps (the report is still referenced below)
        const growth = process.memoryUsage().heapUsed - before;
        checkReport(report);
        expect(elapsed).toBeLessThan(MAX_PARSE_MS);
        expect(growth).toBeLessThan(HEAP_PER_BYTE * text.length + HEAP_SLACK);
      }),
      runs(6),
    );
  });
});
