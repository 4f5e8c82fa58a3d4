import PDFDocument from 'pdfkit';
import { RUN_ITEM_STATUSES, RunItemStatus } from '../../test-runs/run-summary';
import { sortedAttributes } from '../../test-runs/run-metadata';
import type { ReportHeader, ReportItemWithRows, RunReportReader } from '../exports.repository';
import { fitText, PDF_FONT, pdfInfoText, pdfText, registerPdfFonts } from './pdf-fonts';

/**
 * A readable PDF report (CONTRACT §6) drawn with pdfkit and streamed page by page: title, the run's
 * fields, summary figures, a status bar chart and a status pie chart drawn with vector shapes, then
 * the list of items as a table that continues over as many pages as needed (header repeated).
 */

export const STATUS_COLORS: Record<RunItemStatus, string> = {
  untested: '#9ca3af',
  in_progress: '#3b82f6',
  passed: '#16a34a',
  error: '#b91c1c',
  failure: '#ef4444',
  blocked: '#f59e0b',
  skipped: '#a3a3a3',
  xfailed: '#8b5cf6',
  xpassed: '#ec4899',
};

const PAGE = { width: 595.28, height: 841.89, margin: 40 }; // A4
const CONTENT_WIDTH = PAGE.width - 2 * PAGE.margin;
const ROW_HEIGHT = 16;

/** SVG path of one pie slice (angles in radians, 0 = 12 o'clock, clockwise). */
export function sliceSvgPath(
  cx: number,
  cy: number,
  r: number,
  start: number,
  end: number,
): string {
  const n = (v: number) => (Math.abs(v) < 0.005 ? 0 : v).toFixed(2);
  const point = (a: number) => [n(cx + r * Math.sin(a)), n(cy - r * Math.cos(a))] as const;
  const [x1, y1] = point(start);
  const [x2, y2] = point(end);
  const large = end - start > Math.PI ? 1 : 0;
  return `M ${cx} ${cy} L ${x1} ${y1} A ${r} ${r} 0 ${large} 1 ${x2} ${y2} Z`;
}

function fmtDate(iso: string | null): string {
  return iso === null ? '–' : iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

function pct(value: number): string {
  return `${value.toFixed(2)} %`;
}

class PdfReport {
  private page = 1;
  private y = PAGE.margin;

  constructor(
    private readonly doc: PDFKit.PDFDocument,
    private readonly header: ReportHeader,
  ) {}

  private footer(): void {
    const { doc } = this;
    // Drawn inside the bottom margin: lift the margin meanwhile so pdfkit does not start a page.
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    doc.font(PDF_FONT.regular).fontSize(8).fillColor('#6b7280');
    doc.text(
      `${pdfText(this.header.test_run.name)} · page ${this.page}`,
      PAGE.margin,
      PAGE.height - PAGE.margin + 12,
      { width: CONTENT_WIDTH, align: 'right', lineBreak: false },
    );
    doc.page.margins.bottom = bottom;
  }

  private newPage(): void {
    this.footer();
    this.doc.addPage();
    this.page += 1;
    this.y = PAGE.margin;
  }

  private heading(text: string): void {
    this.doc
      .font(PDF_FONT.bold)
      .fontSize(13)
      .fillColor('#111827')
      .text(text, PAGE.margin, this.y, { lineBreak: false });
    this.y += 22;
  }

  drawOverview(): void {
    const { doc, header } = this;
    const run = header.test_run;
    doc
      .font(PDF_FONT.bold)
      .fontSize(22)
      .fillColor('#111827')
      .text('Test Run Report', PAGE.margin, this.y);
    this.y += 30;
    doc
      .font(PDF_FONT.regular)
      .fontSize(14)
      .fillColor('#374151')
      .text(pdfText(run.name), PAGE.margin, this.y, {
        width: CONTENT_WIDTH,
        height: 18,
        ellipsis: true,
      });
    this.y += 26;
    const env =
      run.environment_name === null
        ? '–'
        : `${run.environment_name}${run.environment_revision_number === null ? '' : ` · r${run.environment_revision_number}`}`;
    const fields: Array<[string, string]> = [
      ['Run id', run.id],
      ['Status', run.status],
      ['Environment', env],
      ['Build', run.build ?? '–'],
      ['Milestone', run.milestone_name ?? '–'],
      // CI metadata and attributes (issue #24).
      ['CI', [run.ci?.provider, run.ci?.pipeline_id].filter((v) => v).join(' · ') || '–'],
      ['Branch', run.ci?.branch ?? '–'],
      ['Commit', run.ci?.commit_sha ?? '–'],
      ['Job', run.ci?.job_url ?? '–'],
      ['Assignee', run.assignee_name ?? '–'],
      ['Created by', run.created_by_name ?? run.created_by],
      ['Created', fmtDate(run.created_at)],
      ['Started', fmtDate(run.started_at)],
      ['Completed', fmtDate(run.completed_at)],
      ['Generated', fmtDate(header.generated_at)],
    ];
    doc.fontSize(9);
    fields.forEach(([label, value], i) => {
      const col = i % 2;
      const x = PAGE.margin + col * (CONTENT_WIDTH / 2);
      const y = this.y + Math.floor(i / 2) * 14;
      doc
        .font(PDF_FONT.bold)
        .fillColor('#6b7280')
        .text(label, x, y, { width: 70, lineBreak: false });
      doc
        .font(PDF_FONT.regular)
        .fillColor('#111827')
        .text(pdfText(value), x + 72, y, {
          width: CONTENT_WIDTH / 2 - 80,
          height: 12,
          ellipsis: true,
          lineBreak: false,
        });
    });
    this.y += Math.ceil(fields.length / 2) * 14 + 14;
    const attributes = sortedAttributes(run.attributes);
    if (attributes.length > 0) {
      doc.font(PDF_FONT.regular).fontSize(9).fillColor('#374151');
      doc.text(
        pdfText(`Attributes: ${attributes.map(([k, v]) => `${k}=${v}`).join(', ')}`),
        PAGE.margin,
        this.y,
        { width: CONTENT_WIDTH, height: 24, ellipsis: true },
      );
      this.y += 30;
    }
    if (run.description) {
      doc.font(PDF_FONT.oblique).fontSize(9).fillColor('#374151');
      doc.text(pdfText(run.description), PAGE.margin, this.y, {
        width: CONTENT_WIDTH,
        height: 40,
        ellipsis: true,
      });
      this.y += 46;
    }
    this.drawCards();
    this.drawCharts();
  }

  private drawCards(): void {
    const { doc } = this;
    const s = this.header.summary;
    const cards: Array<[string, string, string]> = [
      ['Total', String(s.total), '#111827'],
      ['Pass rate', pct(s.pass_rate), STATUS_COLORS.passed],
      ['Progress', pct(s.progress_rate), STATUS_COLORS.in_progress],
      ['Failed', String(s.failure + s.error), STATUS_COLORS.failure],
      ['Untested', String(s.untested), STATUS_COLORS.untested],
    ];
    const gap = 8;
    const width = (CONTENT_WIDTH - gap * (cards.length - 1)) / cards.length;
    cards.forEach(([label, value, color], i) => {
      const x = PAGE.margin + i * (width + gap);
      doc.roundedRect(x, this.y, width, 52, 6).lineWidth(1).strokeColor('#e5e7eb').stroke();
      doc.rect(x, this.y, 4, 52).fillColor(color).fill();
      doc
        .font(PDF_FONT.regular)
        .fontSize(8)
        .fillColor('#6b7280')
        .text(label.toUpperCase(), x + 10, this.y + 8, { lineBreak: false });
      // 16 pt, smaller when the figure is wider than the card ("100.00 %").
      doc.font(PDF_FONT.bold);
      let size = 16;
      while (size > 9 && doc.fontSize(size).widthOfString(value) > width - 14) size -= 1;
      doc.fillColor('#111827').text(value, x + 10, this.y + 24 + (16 - size) / 2, {
        width: width - 14,
        lineBreak: false,
      });
    });
    this.y += 70;
  }

  private drawCharts(): void {
    const { doc } = this;
    const counts = this.header.by_status;
    const total = counts.reduce((sum, c) => sum + c.count, 0);
    this.heading('Status Distribution');
    // Horizontal bar chart: one bar per status.
    const top = this.y;
    const labelWidth = 70;
    const barArea = CONTENT_WIDTH * 0.55 - labelWidth - 40;
    const max = Math.max(1, ...counts.map((c) => c.count));
    counts.forEach((c, i) => {
      const y = top + i * 18;
      doc
        .font(PDF_FONT.regular)
        .fontSize(9)
        .fillColor('#374151')
        .text(c.status, PAGE.margin, y + 2, {
          width: labelWidth,
          lineBreak: false,
        });
      doc
        .rect(PAGE.margin + labelWidth, y, barArea, 12)
        .fillColor('#f3f4f6')
        .fill();
      const w = (c.count / max) * barArea;
      if (w > 0)
        doc
          .rect(PAGE.margin + labelWidth, y, w, 12)
          .fillColor(STATUS_COLORS[c.status])
          .fill();
      doc
        .fillColor('#111827')
        .text(String(c.count), PAGE.margin + labelWidth + barArea + 6, y + 2, { lineBreak: false });
    });
    // Pie chart with a legend of shares.
    const cx = PAGE.margin + CONTENT_WIDTH * 0.78;
    const cy = top + 72;
    const r = 64;
    if (total === 0) {
      doc.circle(cx, cy, r).lineWidth(1).strokeColor('#d1d5db').stroke();
      doc
        .font(PDF_FONT.regular)
        .fontSize(9)
        .fillColor('#6b7280')
        .text('no items', cx - 25, cy - 4, { lineBreak: false });
    } else {
      let angle = 0;
      for (const c of counts) {
        if (c.count === 0) continue;
        const sweep = (c.count / total) * 2 * Math.PI;
        if (c.count === total) doc.circle(cx, cy, r).fillColor(STATUS_COLORS[c.status]).fill();
        else
          doc
            .path(sliceSvgPath(cx, cy, r, angle, angle + sweep))
            .fillColor(STATUS_COLORS[c.status])
            .fill();
        angle += sweep;
      }
      doc
        .circle(cx, cy, r * 0.45)
        .fillColor('#ffffff')
        .fill();
      doc
        .font(PDF_FONT.bold)
        .fontSize(11)
        .fillColor('#111827')
        .text(pct(this.header.summary.pass_rate), cx - 30, cy - 6, {
          width: 60,
          align: 'center',
          lineBreak: false,
        });
    }
    this.y = top + RUN_ITEM_STATUSES.length * 18 + 18;
    // Stacked progress bar.
    let x = PAGE.margin;
    doc.rect(PAGE.margin, this.y, CONTENT_WIDTH, 10).fillColor('#f3f4f6').fill();
    for (const c of counts) {
      if (total === 0 || c.count === 0) continue;
      const w = (c.count / total) * CONTENT_WIDTH;
      doc.rect(x, this.y, w, 10).fillColor(STATUS_COLORS[c.status]).fill();
      x += w;
    }
    this.y += 28;
  }

  /** Table columns; the last one takes the remaining width. */
  private static readonly COLUMNS: Array<{ label: string; width: number }> = [
    // Wide enough in DejaVu Sans for five-digit item numbers, `in_progress`, the bold headings and
    // a whole `last executed` time.
    { label: '#', width: 34 },
    { label: 'Key', width: 44 },
    { label: 'Title', width: 147 },
    { label: 'Suite', width: 62 },
    { label: 'Status', width: 62 },
    { label: 'Assignee', width: 58 },
    { label: 'Runs', width: 30 },
  ];

  private tableHeader(): void {
    const { doc } = this;
    let x = PAGE.margin;
    doc.rect(PAGE.margin, this.y, CONTENT_WIDTH, ROW_HEIGHT).fillColor('#f3f4f6').fill();
    doc.font(PDF_FONT.bold).fontSize(8).fillColor('#374151');
    for (const col of PdfReport.columns()) {
      doc.text(col.label, x + 3, this.y + 4, { width: col.width - 6, lineBreak: false });
      x += col.width;
    }
    this.y += ROW_HEIGHT;
  }

  private static columns(): Array<{ label: string; width: number }> {
    const fixed = PdfReport.COLUMNS.reduce((sum, c) => sum + c.width, 0);
    return [...PdfReport.COLUMNS, { label: 'Last executed', width: CONTENT_WIDTH - fixed }];
  }

  startItems(): void {
    if (this.y > PAGE.height - PAGE.margin - 80) this.newPage();
    this.heading(`Items (${this.header.summary.total})`);
    this.tableHeader();
  }

  drawItem(index: number, item: ReportItemWithRows): void {
    if (this.y + ROW_HEIGHT > PAGE.height - PAGE.margin) {
      this.newPage();
      this.tableHeader();
    }
    const { doc } = this;
    if (index % 2 === 0)
      doc.rect(PAGE.margin, this.y, CONTENT_WIDTH, ROW_HEIGHT).fillColor('#fafafa').fill();
    const values = [
      String(index + 1),
      item.test_case.key ?? '',
      item.test_case.title ?? '',
      item.test_case.suite_name ?? '',
      item.status,
      item.assignee_name,
      String(item.execution_count),
      item.last_executed_at === null ? '–' : item.last_executed_at.slice(0, 16).replace('T', ' '),
    ];
    let x = PAGE.margin;
    PdfReport.columns().forEach((col, i) => {
      if (i === 4) {
        doc
          .circle(x + 5, this.y + ROW_HEIGHT / 2, 3)
          .fillColor(STATUS_COLORS[item.status])
          .fill();
        doc.font(PDF_FONT.regular).fontSize(8).fillColor('#111827');
        doc.text(fitText(values[i] ?? '', 'regular', 8, col.width - 14), x + 11, this.y + 4, {
          lineBreak: false,
        });
      } else {
        // Cut to the column here (one line, no measuring by pdfkit: see fitText).
        doc.font(PDF_FONT.regular).fontSize(8).fillColor('#111827');
        doc.text(fitText(pdfText(values[i]), 'regular', 8, col.width - 6), x + 3, this.y + 4, {
          lineBreak: false,
        });
      }
      x += col.width;
    });
    this.y += ROW_HEIGHT;
  }

  finish(): void {
    if (this.header.summary.total === 0) {
      this.doc
        .font(PDF_FONT.oblique)
        .fontSize(9)
        .fillColor('#6b7280')
        .text('This run has no items.', PAGE.margin, this.y + 4);
    }
    this.footer();
    this.doc.end();
  }
}

/**
 * Renders the report into a pdfkit document and returns it as a readable stream right away; the
 * items are drawn as they come from the reader, which is closed at the end (or when the client
 * goes away and the stream is destroyed).
 */
export function pdfReport(reader: RunReportReader): NodeJS.ReadableStream & PDFKit.PDFDocument {
  const doc = new PDFDocument({
    size: 'A4',
    margin: PAGE.margin,
    bufferPages: false,
    info: {
      Title: `Test Run Report – ${pdfInfoText(reader.header.test_run.name)}`,
      Subject: `Test run ${reader.header.test_run.id}`,
      Creator: 'Test management service',
    },
  });
  registerPdfFonts(doc);
  const report = new PdfReport(doc, reader.header);
  void (async () => {
    try {
      report.drawOverview();
      report.startItems();
      let index = 0;
      for await (const item of reader.items()) {
        if (doc.destroyed) break;
        report.drawItem(index++, item);
      }
      if (!doc.destroyed) report.finish();
    } catch (error) {
      doc.destroy(error instanceof Error ? error : new Error(String(error)));
    } finally {
      await reader.close().catch(() => undefined);
    }
  })();
  return doc;
}
