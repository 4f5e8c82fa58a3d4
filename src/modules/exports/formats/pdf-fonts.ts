import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { create, type Font } from 'fontkit';
import { toWellFormedText } from '../../../common/validation/well-formed';

/**
 * The PDF report's fonts: DejaVu Sans (the `dejavu-fonts-ttf` package, free licence), embedded as
 * subsets of the glyphs a report uses. The standard PDF fonts it replaces only show WinAnsi
 * (Western European) text, so Polish, Czech, Turkish, Romanian, Greek or Cyrillic test names came
 * out as `?`. The font files are read once and kept (immutable data); pdfkit parses them per
 * document.
 */
export type PdfFontStyle = 'regular' | 'bold' | 'oblique';

/** The font files of `dejavu-fonts-ttf/ttf` the report uses (the Docker image keeps only these). */
export const PDF_FONT_FILES: Record<PdfFontStyle, string> = {
  regular: 'DejaVuSans.ttf',
  bold: 'DejaVuSans-Bold.ttf',
  oblique: 'DejaVuSans-Oblique.ttf',
};

/** The name each style is registered under in a document (`doc.font(PDF_FONT.bold)`). */
export const PDF_FONT: Record<PdfFontStyle, string> = {
  regular: 'Sans',
  bold: 'Sans-Bold',
  oblique: 'Sans-Oblique',
};

interface LoadedFonts {
  bytes: Record<PdfFontStyle, Buffer>;
  faces: Font[];
  byStyle: Record<PdfFontStyle, Font>;
}

let loaded: LoadedFonts | null = null;

function fonts(): LoadedFonts {
  if (loaded !== null) return loaded;
  const dir = join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
  const bytes = {} as Record<PdfFontStyle, Buffer>;
  const byStyle = {} as Record<PdfFontStyle, Font>;
  for (const style of Object.keys(PDF_FONT_FILES) as PdfFontStyle[]) {
    bytes[style] = readFileSync(join(dir, PDF_FONT_FILES[style]));
    byStyle[style] = create(bytes[style]) as Font;
  }
  loaded = { bytes, faces: Object.values(byStyle), byStyle };
  return loaded;
}

/** Registers the report's three styles in a pdfkit document under {@link PDF_FONT}'s names. */
export function registerPdfFonts(doc: PDFKit.PDFDocument): void {
  const { bytes } = fonts();
  for (const style of Object.keys(PDF_FONT_FILES) as PdfFontStyle[]) {
    doc.registerFont(PDF_FONT[style], bytes[style]);
  }
}

/**
 * Right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, N'Ko and their presentation forms): the
 * font has many of their letters, but pdfkit lays text out left to right without reordering, so a
 * word would read backwards. They are shown as `?` like any character the font lacks.
 */
const RIGHT_TO_LEFT =
  /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]|\ud802[\udc00-\udfff]|\ud83a[\udc00-\udfff]/;

/** Per code point: 0 not asked yet, 1 the report shows it, 2 it does not (1.1 MB, made once). */
let drawableCache: Uint8Array | null = null;

/**
 * Whether the report shows this code point as itself: not a lone surrogate, not in a right-to-left
 * script, and drawn by every style of the font. Decided once per code point.
 */
function drawable(codePoint: number): boolean {
  drawableCache ??= new Uint8Array(0x110000);
  let known = drawableCache[codePoint];
  if (known === 0) {
    const shown =
      (codePoint < 0xd800 || codePoint > 0xdfff) &&
      !RIGHT_TO_LEFT.test(String.fromCodePoint(codePoint)) &&
      fonts().faces.every((face) => face.hasGlyphForCodePoint(codePoint));
    known = shown ? 1 : 2;
    drawableCache[codePoint] = known;
  }
  return known === 1;
}

/**
 * Text as the report can show it: control characters become spaces; a character the font cannot
 * draw in every style (CJK ideographs, emoji, a lone surrogate…) or in a right-to-left script
 * becomes `?`. Latin (with its extended letters), Greek, Cyrillic, Armenian, Georgian and common
 * symbols are shown as they are.
 */
export function pdfText(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  let out = '';
  for (const char of value) {
    const codePoint = char.codePointAt(0) as number;
    if (codePoint < 0x20 || codePoint === 0x7f || (codePoint >= 0x80 && codePoint < 0xa0)) {
      out += ' ';
    } else if (codePoint < 0x7f) {
      out += char;
    } else {
      out += drawable(codePoint) ? char : '?';
    }
  }
  return out;
}

/**
 * Text for the document's metadata (its title): PDF text strings are UTF-16, shown by the viewer
 * with the system's fonts, so only control characters (as spaces) and lone surrogates (as U+FFFD)
 * are replaced.
 */
export function pdfInfoText(value: string): string {
  return toWellFormedText(value.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' '));
}

/** Advance widths in em of the Basic Multilingual Plane's code points, per style (NaN: not read yet). */
const advances = new Map<PdfFontStyle, Float32Array>();

/** The advance width of a code point in em, without kerning (the glyph's own width). */
function advance(style: PdfFontStyle, codePoint: number): number {
  let table = advances.get(style);
  if (table === undefined) {
    table = new Float32Array(0x10000).fill(Number.NaN);
    advances.set(style, table);
  }
  const cached = codePoint < 0x10000 ? table[codePoint] : Number.NaN;
  if (!Number.isNaN(cached)) return cached;
  const face = fonts().byStyle[style];
  const em = face.glyphForCodePoint(codePoint).advanceWidth / face.unitsPerEm;
  if (codePoint < 0x10000) table[codePoint] = em;
  return em;
}

/**
 * `text` (already {@link pdfText}) cut to fit `width` points at `size` points in `style`, ending
 * in `…` when cut. Measured from each character's advance width, without kerning (a fraction of a
 * point on a line; the tests hold the result to pdfkit's own measure), so pdfkit can draw the
 * result as one line without measuring it again: its own
 * `ellipsis` re-lays the text out for every character it removes, which made a report of 5,000
 * items four times slower with an embedded font.
 */
export function fitText(text: string, style: PdfFontStyle, size: number, width: number): string {
  const limit = width / size;
  let used = 0;
  let end = 0;
  for (const char of text) {
    used += advance(style, char.codePointAt(0) as number);
    if (used > limit) break;
    end += char.length;
  }
  if (end === text.length) return text;
  const room = limit - advance(style, 0x2026);
  let cut = 0;
  used = 0;
  for (const char of text) {
    used += advance(style, char.codePointAt(0) as number);
    if (used > room) break;
    cut += char.length;
  }
  return `${text.slice(0, cut).trimEnd()}…`;
}
