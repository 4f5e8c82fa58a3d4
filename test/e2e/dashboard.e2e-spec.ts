/**
 * The dashboard (issue #21) in a real headless Chromium: playwright-core drives the Debian
 * `chromium` package (CHROMIUM_PATH, default /usr/bin/chromium; `.ci/run` installs it). The web app
 * is built once with Vite into a temporary directory the test app serves (WEB_DIR), so the test
 * needs no prior `npm run build`. Each page is opened on data seeded through the API, checked,
 * screenshotted into test-output/dashboard/ and checked by axe-core (no serious or critical
 * violation); the page-load timings go to test-output/dashboard/timings.json.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Browser, chromium, type Page } from 'playwright-core';
import { WEB_APP_CSP } from '../../src/common/http/web-app';
import { REDOC_CSP } from '../../src/common/openapi/openapi';
import { DEFAULT_PASSWORD } from '../support/constants';
import { createTestApp, expectProblem, type RoleFixture, type TestApp, type TestUser } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const API = '/api/v1';
const ROOT = join(__dirname, '..', '..');
const OUTPUT = join(ROOT, 'test-output', 'dashboard');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

type Json = Record<string, unknown>;

/** One JUnit report per run; `checkout` alternates (flaky), `search` breaks in the last run. */
function junit(run: number, last: boolean): Buffer {
  const failure = (message: string) =>
    `<failure message="${message.replace(/"/g, '&quot;')}" type="AssertionError">${message}\n  at shop.test</failure>`;
  return Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="shop" tests="5">
  <testcase classname="shop.Login" name="signs in" time="0.2"/>
  <testcase classname="shop.Checkout" name="pays by card" time="0.4">${run % 2 === 1 ? failure('expected 200 but was 503') : ''}</testcase>
  <testcase classname="shop.Search" name="finds a product" time="0.1">${last ? failure('no result for "lamp"') : ''}</testcase>
  <testcase classname="shop.Cart" name="adds an item" time="0.1"/>
  <testcase classname="shop.Profile" name="edits the address" time="0.1"><skipped/></testcase>
</testsuite>`);
}

const RUNS = 6;
/**
 * Budget of the first script the page loads (bytes, uncompressed): the app without Chart.js, which
 * is a chunk of its own loaded by the pages with a chart (about 180 KB; the whole app was 227 KB).
 */
const FIRST_SCRIPT_MAX_BYTES = 80 * 1024;
/** The API's largest page: the lists below are seeded one entry longer. */
const API_PAGE = 200;
const MANY = API_PAGE + 1;
/** Requests in flight at once while seeding the long lists. */
const BATCH = 10;

/** `make(1)` … `make(count)`, `BATCH` at a time, their answers in order. */
async function inBatches<T>(count: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let first = 1; first <= count; first += BATCH) {
    const size = Math.min(BATCH, count - first + 1);
    out.push(...(await Promise.all(Array.from({ length: size }, (_, k) => make(first + k)))));
  }
  return out;
}

/** `Env 007`: padded, so that names sort as numbers do. */
const numbered = (prefix: string, i: number) => `${prefix} ${String(i).padStart(3, '0')}`;

describe('dashboard in a headless browser (issue #21)', () => {
  let t: TestApp;
  let f: RoleFixture;
  let webDir: string;
  let base: string;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];
  /** URLs the page requested since the last `requested.length = 0`. */
  const requested: string[] = [];
  /** Requests of the page not finished yet (see `settled`). */
  let inFlight = 0;

  /**
   * Waits until every request the page started has finished, then for one round trip to the page
   * (the browser's events arrive in order, so a console error of a late response is in by then):
   * a page that shows its first 404 may still be waiting for a second one.
   */
  async function settled(): Promise<void> {
    for (let i = 0; inFlight > 0; i++) {
      if (i > 2000) throw new Error(`${inFlight} requests of the page never finished`);
      await new Promise((resolve) => setImmediate(resolve));
      await page.evaluate(() => 0);
    }
    await page.evaluate(() => 0);
  }
  const timings: Array<{ page: string; dom_content_loaded_ms: number; load_ms: number; content_ms: number }> = [];
  const axeFindings: Record<string, unknown> = {};
  const seeded = { runIds: [] as string[], envId: '', productId: '' };

  function ok(res: { status: number; body: unknown }, status = 200): Json {
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Json;
  }

  async function seed(): Promise<void> {
    const lead = f.lead.token;
    // Readable names for the screenshots.
    ok(await t.req('patch', `${API}/projects/${f.projectId}`, lead).send({ name: 'Web shop', description: 'The online shop: API, web front end and payments' }));
    ok(await t.req('patch', `${API}/users/${f.viewer.id}`, t.adminToken).send({ display_name: 'Quinn Viewer' }));
    ok(await t.req('patch', `${API}/users/${f.tester.id}`, t.adminToken).send({ display_name: 'Tess Tester' }));
    const env = ok(
      await t.req('post', `${API}/environments`, lead).send({
        project_id: f.projectId,
        name: 'Staging EU',
        topology: {
          system_under_test: [
            {
              name: 'shop-api',
              component_type: 'service',
              endpoints: ['https://api.staging.example'],
              nodes: [{ name: 'api-1', host_type: 'vm', role: 'app', provider: 'hetzner', region: 'eu-central' }],
            },
          ],
          supporting_services: [{ name: 'postgres', component_type: 'database', nodes: [{ name: 'db-1', host_type: 'vm', region: 'eu-central' }] }],
        },
      }),
      201,
    );
    seeded.envId = env.id as string;
    ok(
      await t.req('patch', `${API}/environments/${seeded.envId}`, lead).send({
        topology: {
          system_under_test: [
            {
              name: 'shop-api',
              component_type: 'service',
              endpoints: ['https://api.staging.example'],
              nodes: [{ name: 'api-1', host_type: 'vm', role: 'app', provider: 'hetzner', region: 'eu-west' }],
            },
          ],
          supporting_services: [{ name: 'postgres', component_type: 'database', nodes: [{ name: 'db-1', host_type: 'vm', region: 'eu-central' }] }],
        },
      }),
    );
    for (let i = 0; i < RUNS; i++) {
      const last = i === RUNS - 1;
      const run = ok(
        await t.req('post', `${API}/test-runs`, f.tester.token).send({
          project_id: f.projectId,
          name: `Nightly ${i + 1}`,
          environment_id: seeded.envId,
          build: `1.0.${i + 1}`,
          ci: { branch: last ? 'feature/search' : 'main' },
        }),
        201,
      );
      ok(
        await t
          .req('post', `${API}/test-runs/${String(run.id)}/imports/junit?create_missing_cases=true`, f.tester.token)
          .attach('file', junit(i, last), `nightly-${i + 1}.xml`),
        201,
      );
      if (!last) ok(await t.req('patch', `${API}/test-runs/${String(run.id)}`, f.tester.token).send({ status: 'completed' }));
      seeded.runIds.push(run.id as string);
    }
    const component = async (name: string, factors: number[]) => {
      const [bc, cf, ic, dd, pis, ac] = factors;
      return ok(
        await t.req('post', `${API}/components`, lead).send({
          project_id: f.projectId,
          name,
          business_criticality: bc,
          change_frequency: cf,
          integration_complexity: ic,
          defect_density: dd,
          production_incident_score: pis,
          automation_confidence: ac,
        }),
        201,
      ).id as string;
    };
    const payments = await component('Payments', [5, 4, 4, 4, 5, 1]);
    const catalogue = await component('Catalogue', [4, 2, 2, 2, 3, 5]);
    ok(
      await t.req('post', `${API}/test-cases`, lead).send({
        project_id: f.projectId,
        title: 'Refund a card payment',
        status: 'active',
        component_coverages: [
          { component_id: payments, coverage_type: 'direct', coverage_strength: 'regression', is_mandatory_for_release: true },
        ],
      }),
      201,
    );
    const product = ok(await t.req('post', `${API}/products`, lead).send({ project_id: f.projectId, name: 'Web shop', key: 'SHOP' }), 201);
    seeded.productId = product.id as string;
    ok(
      await t.req('put', `${API}/products/${seeded.productId}/components`, lead).send({
        links: [{ component_id: payments }, { component_id: catalogue }],
      }),
    );
  }

  beforeAll(async () => {
    webDir = mkdtempSync(join(tmpdir(), 'tms-web-'));
    const build = promisify(execFile)(
      process.execPath,
      [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', join(ROOT, 'web', 'vite.config.mts'), '--outDir', webDir, '--emptyOutDir'],
      // As `npm run build` builds it (jest's NODE_ENV=test would bundle Preact's debug helpers).
      { cwd: ROOT, env: { ...process.env, NODE_ENV: 'production' } },
    );
    // Assigned before anything else can fail, so that afterAll closes it.
    const launched = chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    void launched.then((b) => (browser = b), () => undefined);
    await build;
    t = await createTestApp({ WEB_DIR: webDir });
    f = await t.roleFixture();
    await seed();
    base = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}`;
    browser = await launched;
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    page.on('request', (r) => {
      requested.push(r.url());
      inFlight++;
    });
    page.on('requestfinished', () => inFlight--);
    page.on('requestfailed', () => inFlight--);
    mkdirSync(OUTPUT, { recursive: true });
  });

  afterAll(async () => {
    if (timings.length > 0) writeFileSync(join(OUTPUT, 'timings.json'), JSON.stringify(timings, null, 2) + '\n');
    // Every axe finding, the minor and moderate ones included (only serious and critical fail).
    if (Object.keys(axeFindings).length > 0) writeFileSync(join(OUTPUT, 'axe.json'), JSON.stringify(axeFindings, null, 2) + '\n');
    await browser?.close();
    await t?.close();
    if (webDir) rmSync(webDir, { recursive: true, force: true });
  });

  /** Screenshot, axe (no serious or critical violation), and no console error (CSP ones included). */
  async function checkPage(name: string): Promise<void> {
    await page.screenshot({ path: join(OUTPUT, `${name}.png`), fullPage: true });
    // Evaluated through the DevTools protocol: a <script> tag would be refused by the page's CSP.
    await page.evaluate(AXE_SOURCE);
    // (Browser code as strings: this file is type-checked without the DOM library.)
    const violations = await page.evaluate<Array<{ id: string; impact: string; targets: string[] }>>(`
      axe.run(document, { resultTypes: ['violations'] }).then((result) =>
        result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) })))`);
    axeFindings[name] = violations;
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
    expect(consoleErrors).toEqual([]);
  }

  /** A fresh document load of `hash` (the token stays in sessionStorage), timed until `ready` shows. */
  async function open(name: string, hash: string, ready: () => Promise<void>): Promise<void> {
    // From another document: a hash change alone would not load the page again.
    await page.goto('about:blank');
    await page.goto(`${base}/app/${hash}`);
    await ready();
    const timing = await page.evaluate<{ dom: number; load: number; now: number }>(`(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      return { dom: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, now: performance.now() };
    })()`);
    timings.push({ page: name, dom_content_loaded_ms: Math.round(timing.dom), load_ms: Math.round(timing.load), content_ms: Math.round(timing.now) });
  }

  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });

  /**
   * Opens `hash` with the answer to the request matching `held` kept back until a request matching
   * `needed` has been sent: `needed` must go out in parallel with `held`, not wait for its answer
   * (no request waterfall). If it never comes, the held answer is let through after a bound and
   * the expectation fails.
   */
  async function expectParallel(hash: string, held: RegExp, needed: RegExp, ready: () => Promise<void>): Promise<void> {
    const sent = () => requested.some((u) => needed.test(u));
    let sentWhileHeld: boolean | null = null;
    await page.route(held, async (route) => {
      sentWhileHeld = await waitFor(sent, { timeoutMs: 5_000, what: `a request matching ${String(needed)}` }).then(
        () => true,
        () => false,
      );
      await route.continue();
    });
    try {
      await page.goto('about:blank');
      requested.length = 0;
      await page.goto(`${base}/app/${hash}`);
      await ready();
    } finally {
      await page.unroute(held);
    }
    expect({ held: String(held), sentWhileHeld }).toEqual({ held: String(held), sentWhileHeld: true });
  }

  it('serves the app under /app with a strict CSP and leaves the API pages alone', async () => {
    const root = await t.req('get', '/');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/app/');
    expect((await t.req('get', '/app')).headers.location).toBe('/app/');

    const index = await t.req('get', '/app/');
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toMatch(/^text\/html/);
    expect(index.headers['content-security-policy']).toBe(WEB_APP_CSP);
    expect(WEB_APP_CSP).toContain("default-src 'self'");
    expect(WEB_APP_CSP).toContain("script-src 'self'");
    expect(WEB_APP_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    // Every script of the built page is a file of the service: none inline, none elsewhere.
    const scripts = [...index.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(body.trim()).toBe('');
      expect(attrs).toMatch(/src="\/app\/assets\/[\w.-]+\.js"/);
    }

    const asset = /src="(\/app\/assets\/[\w.-]+\.js)"/.exec(index.text)![1];
    const js = await t.req('get', asset);
    expect(js.status).toBe(200);
    expect(js.headers['cache-control']).toContain('immutable');
    expect(js.headers['content-security-policy']).toBe(WEB_APP_CSP);
    expect(js.text ?? js.body.toString()).not.toMatch(/\beval\(|new Function\(/);
    // A small first script (Chart.js is loaded later, by the pages with a chart); the page itself
    // is revalidated every time, so a new build's asset names are seen at once.
    expect(Buffer.byteLength(js.text ?? js.body.toString())).toBeLessThanOrEqual(FIRST_SCRIPT_MAX_BYTES);
    expect(index.headers['cache-control']).toBe('no-cache');

    expectProblem(await t.req('get', '/app/assets/missing.js'), 404, 'route_not_found');
    expectProblem(await t.req('get', '/app/elsewhere'), 404, 'route_not_found');
    const post = await t.req('post', '/app/').send({});
    expect(post.status).toBe(405);
    expect(post.headers.allow).toContain('GET');
    // The API's own pages keep their policies.
    expect((await t.req('get', '/redoc')).headers['content-security-policy']).toBe(REDOC_CSP);
    expect((await t.req('get', `${API}/projects`, t.adminToken)).status).toBe(200);
  });

  it('signs in (a wrong password is a readable problem) and lists the projects', async () => {
    await page.goto(`${base}/`);
    expect(page.url()).toBe(`${base}/app/`);
    await heading('Sign in').waitFor();
    await checkPage('sign-in');

    await page.getByLabel('Username').fill(f.viewer.username);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/Error 401/);

    await page.getByLabel('Password').fill(DEFAULT_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Projects').waitFor();
    // The token lives in this tab's sessionStorage, never in a cookie.
    expect(await page.context().cookies()).toEqual([]);
    expect(await page.evaluate<string | null>(`sessionStorage.getItem('tms.dashboard.token')`)).toMatch(/^ey/);
    // The page refuses inline script even when something manages to insert one.
    const inlineRan = await page.evaluate<boolean>(`(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__inlineRan = true';
      document.head.append(s);
      return window.__inlineRan === true;
    })()`);
    expect(inlineRan).toBe(false);
    consoleErrors.length = 0; // the refusal above is logged as a CSP error, on purpose

    requested.length = 0;
    // Ready when the list is there: the heading is drawn before the projects arrive (waiting for the
    // heading alone let the count below run before them, on a loaded machine).
    const webShop = page.getByRole('link', { name: 'Web shop', exact: true });
    await open('projects', '#/projects', () => webShop.first().waitFor());
    await expect(webShop.count()).resolves.toBe(1);
    // A page without a chart does not load Chart.js.
    expect(requested.filter((u) => u.includes('/assets/chart-draw-'))).toEqual([]);
    await checkPage('projects');

    // Keyboard only: a page opens with focus on its heading, the next Tab reaches its first link
    // (the project), Enter opens it; the skip link (before the header) moves focus to the content.
    await expect(page.locator(':focus').textContent()).resolves.toBe('Projects');
    await page.keyboard.press('Tab');
    await expect(page.locator(':focus').textContent()).resolves.toBe('Web shop');
    await page.keyboard.press('Enter');
    await heading('Test runs').waitFor();
    // The heading takes focus in an effect after the page is drawn: wait for it, so that it cannot
    // take the focus back from the link below.
    await page.locator('h1:focus', { hasText: 'Test runs' }).waitFor();
    await page.getByRole('link', { name: 'Test Management' }).focus();
    await page.keyboard.press('Shift+Tab');
    await expect(page.locator(':focus').textContent()).resolves.toBe('Skip to content');
    await page.keyboard.press('Enter');
    await expect(page.locator(':focus').getAttribute('id')).resolves.toBe('main');
    await page.keyboard.press('Tab');
    await expect(page.locator(':focus').textContent()).resolves.toBe('Projects');
  });

  it("shows a project's runs with filters and the pass-rate trend", async () => {
    requested.length = 0;
    await open('runs', `#/projects/${f.projectId}/runs`, () => page.locator('table.runs tbody tr').first().waitFor());
    await expect(page.locator('table.runs tbody tr').count()).resolves.toBe(RUNS);
    // The list asks for the fields it shows (no run's environment snapshot); the environment
    // filter's choices are not on screen, so they are not asked for with the page…
    const lists = () => requested.filter((u) => /\/api\/v1\/(test-runs|environments)\?/.test(u));
    expect(lists()).toHaveLength(1);
    expect(new URL(lists()[0]).searchParams.get('fields')).toMatch(/^[\w,]+$/);
    expect(requested.filter((u) => u.includes('/assets/chart-draw-'))).toHaveLength(1); // the trend's Chart.js
    // …but when the filter is first used, names only (no environment's topology).
    await page.getByLabel('Environment').focus();
    await page.getByRole('option', { name: 'Staging EU' }).waitFor({ state: 'attached' });
    expect(lists().filter((u) => u.includes('/environments?')).map((u) => new URL(u).searchParams.get('fields'))).toEqual(['id,name']);
    // Filtered by an environment, the page names it at once: its choices are asked for with the
    // runs, not after them.
    await expectParallel(`#/projects/${f.projectId}/runs?environment_id=${seeded.envId}`, /\/api\/v1\/test-runs\?/, /\/api\/v1\/environments\?/, () =>
      page.locator('table.runs tbody tr').first().waitFor(),
    );
    await expect(page.getByLabel('Environment').locator('option:checked').textContent()).resolves.toBe('Staging EU');
    await expect(page.getByRole('img', { name: /Pass rate over the last 6 runs/ }).count()).resolves.toBe(1);
    await checkPage('runs');

    await page.getByLabel('Status').selectOption('in_progress');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    // (Locators, not waitForFunction: Playwright evaluates its predicate with eval, which the CSP refuses.)
    const rows = page.locator('table.runs tbody tr');
    const runRow = (name: string) => page.locator('table.runs tbody tr th', { hasText: new RegExp(`^${name}$`) });
    await rows.nth(1).waitFor({ state: 'detached' });
    await expect(rows.locator('th').textContent()).resolves.toBe(`Nightly ${RUNS}`);

    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Build').fill('1.0.2');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await runRow('Nightly 2').waitFor();
    await expect(rows.count()).resolves.toBe(1);

    await page.getByLabel('Build').fill('');
    await page.getByLabel('Branch').fill('feature/search');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await runRow(`Nightly ${RUNS}`).waitFor();
    await expect(rows.count()).resolves.toBe(1);

    await page.getByLabel('Branch').fill('no-such-branch');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No runs match these filters.').waitFor();
    expect(consoleErrors).toEqual([]);
  });

  it('shows a run: figures, status chart, items with failure messages, exports, compare with previous', async () => {
    const runId = seeded.runIds[RUNS - 1];
    requested.length = 0;
    await open('run', `#/runs/${runId}`, () => page.locator('table.items tbody tr').first().waitFor());
    await heading(`Nightly ${RUNS}`).waitFor();
    // The breadcrumb names the project from what the projects page listed in this tab: no second
    // round trip after the run's answer.
    await expect(page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Web shop' }).count()).resolves.toBe(1);
    expect(requested.filter((u) => u.includes('/api/v1/projects/'))).toEqual([]);
    const figures = page.getByRole('definition');
    await expect(figures.first().textContent()).resolves.toBe('5'); // items
    // Run 6: login and cart pass, checkout and search fail, profile is skipped.
    const chart = page.getByRole('img', { name: /^Results: / });
    await expect(chart.getAttribute('aria-label')).resolves.toMatch(/2 passed.*2 failed.*1 skipped|2 passed.*1 skipped.*2 failed/);
    await expect(page.locator('table.items').textContent()).resolves.toContain('no result for "lamp"');
    await expect(page.locator('table.items tbody tr').count()).resolves.toBe(5);
    await checkPage('run');

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/\.csv$/);

    await page.getByRole('button', { name: 'Compare with previous' }).click();
    const comparison = page.locator('section.comparison');
    await comparison.locator('table').waitFor();
    await expect(comparison.getByRole('link', { name: `Nightly ${RUNS - 1}` }).count()).resolves.toBe(1);
    // Run 5 passed checkout and search, run 6 fails both.
    const rows = await comparison.locator('tbody tr').allTextContents();
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatch(/(pays by card|finds a product)Newly failingPassedFailed/);
    await checkPage('run-compare');
    // Opened with the comparison, the page asks for it together with the run, not after it.
    await expectParallel(`#/runs/${runId}?compare=previous`, /\/api\/v1\/test-runs\/[\w-]+\?fields=/, /\/compare\?/, () =>
      page.locator('section.comparison table').waitFor(),
    );

    // A run without a previous one: the API's problem, as a readable message.
    await page.goto(`${base}/app/#/runs/${seeded.runIds[0]}?compare=previous`);
    await expect(page.locator('section.comparison').getByRole('alert').textContent()).resolves.toMatch(/Error 404/);
    await settled();
    consoleErrors.length = 0; // the browser logs the 404 response
  });

  it('pages past the end say so, failures come first, and long names wrap inside the window', async () => {
    const runId = seeded.runIds[RUNS - 1];
    // The items of run 6, failures first (checkout and search), then the rest.
    await page.goto(`${base}/app/#/runs/${runId}`);
    await page.locator('table.items tbody tr').first().waitFor();
    const badge = (i: number) => page.locator('table.items tbody tr td .badge').nth(i).getAttribute('class');
    expect([await badge(0), await badge(1), await badge(2)]).toEqual(['badge status-failure', 'badge status-failure', expect.not.stringContaining('failure')]);
    // A page past the end of a non-empty list: not "no items", and a way back (found by an audit).
    await page.goto(`${base}/app/#/runs/${runId}?page=3`);
    await page.getByText('Page 3 is past the end (5 in all).').waitFor();
    await page.getByRole('button', { name: 'Go to page 1' }).click();
    await page.locator('table.items tbody tr').first().waitFor();
    await expect(page.locator('table.items tbody tr').count()).resolves.toBe(5);
    await page.goto(`${base}/app/#/projects/${f.projectId}/runs?page=9`);
    await page.getByText(`Page 9 is past the end (${RUNS} in all).`).waitFor();
    // The other lists too (they showed an empty table with eight Previous clicks back).
    for (const hash of [
      '#/projects?page=9',
      `#/projects/${f.projectId}/environments?page=9`,
      `#/projects/${f.projectId}/products?page=9`,
      `#/environments/${seeded.envId}?rev_page=9`,
    ]) {
      await page.goto(`${base}/app/${hash}`);
      await page.getByText(/Page 9 is past the end \(\d+ in all\)\./).waitFor();
    }
    // An id from the address stays one path segment: `%2Fexport` asked for the run's export.
    requested.length = 0;
    await page.goto(`${base}/app/#/runs/${runId}%2Fexport`);
    await page.getByRole('alert').waitFor();
    expect(requested.filter((u) => u.includes('/api/v1/test-runs/')).every((u) => u.includes(`${runId}%2Fexport`))).toBe(true);
    expect(requested.some((u) => /\/export(\?|$)/.test(u))).toBe(false);
    consoleErrors.length = 0; // the browser logs the 404 the page shows
    // A page number that is not whole is read as its whole part, as on the other pages (it was a 422).
    await page.goto(`${base}/app/#/runs/${runId}?page=1.5`);
    await page.locator('table.items tbody tr').first().waitFor();
    await expect(page.locator('table.items tbody tr').count()).resolves.toBe(5);

    // Long names and an unbroken URL in a failure message wrap instead of widening the page.
    const projectId = await t.createProject(f.lead.token, 'Long names');
    await t.addMember(projectId, f.viewer.id, 'viewer', f.lead.token);
    const long = `Release candidate ${'with-a-very-long-build-label-'.repeat(7)}`;
    const run = ok(await t.req('post', `${API}/test-runs`, f.lead.token).send({ project_id: projectId, name: long }), 201);
    const url = `https://acs.example/3ds/challenge?${'transaction=0123456789abcdef&'.repeat(12)}`;
    const report = `<testsuite name="s"><testcase classname="shop.Checkout" name="test_checkout_with_saved_card[${'visa-EUR-3ds_challenge-guest_user-'.repeat(6)}]"><failure message="redirect to ${url.replace(/&/g, '&amp;')} failed"/></testcase></testsuite>`;
    ok(
      await t
        .req('post', `${API}/test-runs/${String(run.id)}/imports/junit?create_missing_cases=true`, f.lead.token)
        .attach('file', Buffer.from(report), 'long.xml'),
      201,
    );
    const width = `document.documentElement.scrollWidth <= window.innerWidth`;
    await page.goto(`${base}/app/#/runs/${String(run.id)}`);
    await page.locator('table.items tbody tr').first().waitFor();
    expect(await page.evaluate<boolean>(width)).toBe(true);
    await page.goto(`${base}/app/#/projects/${projectId}/runs`);
    await page.locator('table tbody tr').first().waitFor();
    expect(await page.evaluate<boolean>(width)).toBe(true);
    await checkPage('long-names');
  });

  it('ranks flaky tests with their pass/fail history strips, all from the ranking', async () => {
    await page.goto('about:blank');
    requested.length = 0;
    await open('flaky', `#/projects/${f.projectId}/flaky`, () => page.locator('table.flaky tbody tr').first().waitFor());
    await page.waitForLoadState('networkidle');
    // One API call: each case of the ranking carries its window (`recent`), no history call per strip.
    expect(requested.filter((u) => u.includes('/api/'))).toEqual([expect.stringMatching(/\/api\/v1\/test-cases\/flaky\?/)]);
    // Checkout flips on every run (flip rate 100 %), search once: checkout ranks first.
    const titles = await page.locator('table.flaky tbody th').allTextContents();
    expect(titles).toEqual([expect.stringContaining('pays by card'), expect.stringContaining('finds a product')]);
    await expect(page.locator('table.flaky tbody tr').first().textContent()).resolves.toContain('100 %');
    const strip = page.getByRole('list', { name: /History of .*pays by card/ });
    await expect(strip.getAttribute('aria-label')).resolves.toMatch(/PFPFPF$/);
    await expect(strip.locator('.square.pass').count()).resolves.toBe(3);
    await expect(strip.locator('.square.fail').count()).resolves.toBe(3);
    // Every row has its strip at once, below the fold too.
    await expect(page.locator('table.flaky tbody ol.strip').count()).resolves.toBe(titles.length);

    // Each strip's squares are the case's history (oldest on the left): same runs, same outcomes.
    const ranking = ok(await t.req('get', `${API}/test-cases/flaky?project_id=${f.projectId}`, f.viewer.token));
    for (const item of ranking.items as Json[]) {
      const history = ok(await t.req('get', `${API}/test-cases/${item.test_case_id as string}/history?page_size=30`, f.viewer.token));
      const expected = (history.items as Json[])
        .map((h) => ({
          href: `#/runs/${h.run_id as string}`,
          outcome: h.status === 'passed' || h.status === 'xfailed' ? 'pass' : h.status === 'failure' || h.status === 'error' ? 'fail' : 'other',
        }))
        .reverse();
      expect(expected).toHaveLength(RUNS);
      const squares = page.getByRole('list', { name: new RegExp(`History of ${item.title as string}`) }).locator('a.square');
      const drawn: Array<{ href: string | null; outcome: string | undefined }> = [];
      for (const square of await squares.all()) {
        const classes = (await square.getAttribute('class'))?.split(/\s+/) ?? [];
        drawn.push({ href: await square.getAttribute('href'), outcome: classes.find((c) => c !== 'square') });
      }
      expect(drawn).toEqual(expected);
      await expect(squares.last().getAttribute('title')).resolves.toMatch(/, latest run$/);
      await expect(squares.first().getAttribute('title')).resolves.toMatch(new RegExp(`, ${RUNS - 1} runs before the latest$`));
    }
    await checkPage('flaky');
  });

  it('shows an environment: topology tree, revisions and the drift between two', async () => {
    await open('environment', `#/environments/${seeded.envId}`, () => page.locator('table.diff').waitFor());
    await heading('Staging EU').waitFor();
    const tree = page.getByRole('list', { name: 'Topology' });
    await expect(tree.textContent()).resolves.toMatch(/System under test.*shop-api.*api-1.*eu-west.*Supporting services.*postgres.*db-1/);
    await expect(page.locator('table.diff').textContent()).resolves.toMatch(/changed.*region.*"?eu-central"?.*"?eu-west"?/);
    await checkPage('environment');

    await page.getByLabel('From revision').selectOption('2');
    await page.getByLabel('To revision').selectOption('2');
    await page.getByRole('button', { name: 'Show the drift' }).click();
    await page.getByText('Revisions 2 and 2 are identical.').waitFor();
    // The drift is asked for as soon as the environment is known, alongside its revisions.
    await expectParallel(`#/environments/${seeded.envId}`, /\/revisions\?/, /\/diff\?/, () => page.locator('table.diff').waitFor());
  });

  it('shows a product: readiness verdict with blockers, coverage and components by risk', async () => {
    await open('product', `#/products/${seeded.productId}`, () => page.locator('.verdict').waitFor());
    await page.getByRole('table', { name: 'Components, highest risk first' }).waitFor();
    await expect(page.locator('.verdict').textContent()).resolves.toContain('Not ready to ship');
    const blockers = page.getByRole('table', { name: 'Blockers' });
    await expect(blockers.textContent()).resolves.toMatch(/Payments.*has not run|Catalogue.*No release-mandatory/);
    const rows = page.getByRole('table', { name: 'Components, highest risk first' }).locator('tbody th');
    await expect(rows.allTextContents()).resolves.toEqual([expect.stringContaining('Payments'), expect.stringContaining('Catalogue')]);
    await checkPage('product');
  });

  it('signs out, and a viewer of another project sees its empty states', async () => {
    expect((await t.req('get', `${API}/auth/me`, f.viewer.token)).status).toBe(200);
    // The project's name asked for by this session (none stored in the tab): a later session must
    // not be shown it (found by an audit: the next user, no member, saw it in the breadcrumb).
    await page.evaluate(`sessionStorage.removeItem('tms.dashboard.project-names')`);
    await page.goto(`${base}/app/#/projects/${f.projectId}/environments`);
    const crumb = page.getByRole('navigation', { name: 'Project' }).getByRole('link').nth(1);
    await waitFor(async () => (await crumb.textContent()) === 'Web shop', { what: 'the project name in the breadcrumb' });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await heading('Sign in').waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    // Signing out revokes the user's access tokens on the server (POST /auth/logout), so a copy of
    // the token stops working too (found by an audit: it kept working for its whole lifetime).
    await waitFor(async () => (await t.req('get', `${API}/auth/me`, f.viewer.token)).status === 401, {
      what: 'the signed-out token to be refused',
    });
    await page.goto(`${base}/app/#/projects`);

    await page.getByLabel('Username').fill(f.outsider.username);
    await page.getByLabel('Password').fill(DEFAULT_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('You are not a member of any project yet.').waitFor();
    // Another project's page: the API's 404 for non-members, shown as a message.
    await page.goto(`${base}/app/#/projects/${f.projectId}/flaky`);
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/Error 404/);
    await expect(crumb.textContent()).resolves.toBe('Project');
    // The page's other requests are refused too, maybe after the message shows: all of them logged.
    await settled();
    consoleErrors.length = 0;
    await checkPage('not-a-member');
  });

  /**
   * Lists longer than the API's largest page (200): a user with 201 projects, whose first project
   * has 201 environments and 201 products, the first environment 201 revisions. Every entry is
   * reachable: the lists page through `Pager`, the runs filter offers every environment, the drift
   * selects every revision.
   */
  describe('lists longer than one page of the API', () => {
    const many = { user: undefined as unknown as TestUser, projectId: '', envId: '' };
    const names = (prefix: string) => Array.from({ length: MANY }, (_, k) => numbered(prefix, k + 1));
    /** The query of the page's hash route (`#/environments/…?from=1&to=2`). */
    const hashQuery = () => new URLSearchParams(new URL(page.url()).hash.split('?')[1] ?? '');

    beforeAll(async () => {
      many.user = await t.createUser({ displayName: 'Morgan Many' });
      const token = many.user.token;
      many.projectId = await t.createProject(token, numbered('Bulk', 1));
      const post = async (path: string, body: Json) => ok(await t.req('post', `${API}${path}`, token).send(body), 201).id as string;
      const envs = async () => {
        const ids = await inBatches(MANY, (i) => post('/environments', { project_id: many.projectId, name: numbered('Env', i) }));
        many.envId = ids[0];
        // Revisions 2…MANY of the first one (each PATCH waits for the one before on the row's lock).
        await inBatches(MANY - 1, async (i) =>
          ok(await t.req('patch', `${API}/environments/${many.envId}`, token).send({ description: `Change ${i}` })),
        );
      };
      await Promise.all([
        inBatches(MANY - 1, (i) => t.createProject(token, numbered('Bulk', i + 1))),
        envs(),
        inBatches(MANY, (i) => post('/products', { project_id: many.projectId, name: numbered('Product', i) })),
      ]);
      await page.goto(`${base}/app/#/projects`);
      const signOut = page.getByRole('button', { name: 'Sign out' });
      if ((await signOut.count()) > 0) await signOut.click();
      await page.getByLabel('Username').fill(many.user.username);
      await page.getByLabel('Password').fill(DEFAULT_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await heading('Projects').waitFor();
    });

    /** Opens the list at `hash`, checks its first page and the next one; the names listed on both. */
    async function pageThrough(name: string, hash: string): Promise<string[]> {
      const rows = page.locator('table tbody tr');
      await open(`${name}-page-1`, hash, () => rows.first().waitFor());
      await expect(rows.count()).resolves.toBe(API_PAGE);
      const pager = page.getByRole('navigation', { name: 'Pages' });
      await expect(pager.textContent({ timeout: 5_000 })).resolves.toContain(`Page 1 (${MANY} in all)`);
      const first = await page.locator('table tbody th').allTextContents();
      await pager.getByRole('button', { name: 'Next page' }).click();
      await pager.getByText(`Page 2 (${MANY} in all)`).waitFor();
      expect(hashQuery().get('page')).toBe('2');
      await expect(rows.count()).resolves.toBe(MANY - API_PAGE);
      await expect(pager.getByRole('button', { name: 'Next page' }).isDisabled()).resolves.toBe(true);
      const second = await page.locator('table tbody th').allTextContents();
      await checkPage(`${name}-page-2`);
      return [...first, ...second];
    }

    it('pages the projects list', async () => {
      await expect(pageThrough('projects', '#/projects')).resolves.toEqual(names('Bulk'));
    });

    it("pages a project's environments", async () => {
      const listed = await pageThrough('environments', `#/projects/${many.projectId}/environments`);
      expect(listed.sort()).toEqual(names('Env'));
    });

    it("pages a project's products", async () => {
      const listed = await pageThrough('products', `#/projects/${many.projectId}/products`);
      expect(listed.sort()).toEqual(names('Product'));
    });

    it("offers every environment in the runs page's filter", async () => {
      requested.length = 0;
      await open('runs-many-environments', `#/projects/${many.projectId}/runs`, () => page.getByText('No runs match these filters.').waitFor());
      const filter = page.getByLabel('Environment');
      await filter.focus();
      await filter.locator('option').nth(MANY).waitFor({ state: 'attached', timeout: 5_000 });
      const offered = await filter.locator('option').allTextContents();
      expect(offered.slice(1).sort()).toEqual(names('Env'));
      // Names only, page 1 then page 2 (the rest), both of API_PAGE.
      const asked = requested.filter((u) => u.includes('/api/v1/environments?')).map((u) => new URL(u).searchParams);
      expect(asked.map((q) => [q.get('fields'), q.get('page'), q.get('page_size')])).toEqual([
        ['id,name', '1', String(API_PAGE)],
        ['id,name', '2', String(API_PAGE)],
      ]);
    });

    it('offers every revision to the drift and pages the revisions', async () => {
      await open('environment-many-revisions', `#/environments/${many.envId}`, () => page.locator('table.diff').waitFor());
      const every = Array.from({ length: MANY }, (_, k) => String(MANY - k));
      for (const label of ['From revision', 'To revision']) {
        await expect(page.getByLabel(label).locator('option').allTextContents()).resolves.toEqual(every);
      }
      await page.getByLabel('From revision').selectOption('1');
      await page.getByRole('button', { name: 'Show the drift' }).click();
      await page.getByText(`From revision 1 to ${MANY}:`).waitFor();

      // The revisions table pages on a parameter of its own: the drift shown stays.
      const numbers = page.getByRole('table', { name: 'Revisions, newest first' }).locator('tbody td.num');
      await numbers.first().waitFor();
      await expect(numbers.count()).resolves.toBe(API_PAGE);
      const pager = page.getByRole('navigation', { name: 'Pages' });
      await pager.getByRole('button', { name: 'Next page' }).click();
      await pager.getByText(`Page 2 (${MANY} in all)`).waitFor();
      await expect(numbers.allTextContents()).resolves.toEqual(['1']);
      const q = hashQuery();
      expect({ from: q.get('from'), to: q.get('to'), rev_page: q.get('rev_page') }).toEqual({ from: '1', to: String(MANY), rev_page: '2' });
      await page.getByText(`From revision 1 to ${MANY}:`).waitFor();
      await checkPage('environment-revisions-page-2');
    });
  });
});
