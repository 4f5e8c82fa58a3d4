import { inflateSync } from 'node:zlib';

/**
 * The text a PDF written by pdfkit draws, one string per text-showing operator (`Tj` / `TJ`), in
 * drawing order. Glyph codes are turned back into characters through each font's `ToUnicode` map
 * (the embedded report fonts, 2-byte codes), or read as bytes for a font without one. Enough for
 * pdfkit's output (uncompressed objects, Flate content streams), not a general PDF reader.
 */
export function pdfText(pdf: Buffer): string {
  const raw = pdf.toString('latin1');
  const objects = new Map<number, { dict: string; stream: string | null }>();
  for (const m of raw.matchAll(/(\d+) 0 obj\s*([\s\S]*?)endobj/g)) {
    const body = m[2];
    // "\nendstream" exactly, as pdfkit writes it (an optional \r would eat a last data byte 0x0D).
    const s = /stream\r?\n([\s\S]*?)\nendstream/.exec(body);
    let stream: string | null = null;
    if (s !== null) {
      try {
        stream = inflateSync(Buffer.from(s[1], 'latin1')).toString('latin1');
      } catch {
        stream = s[1];
      }
    }
    objects.set(Number(m[1]), { dict: s === null ? body : body.slice(0, s.index), stream });
  }
  const ref = (dict: string, key: string): number | null => {
    const r = new RegExp(`/${key} (\\d+) 0 R`).exec(dict);
    return r === null ? null : Number(r[1]);
  };

  const lines: string[] = [];
  for (const page of objects.values()) {
    if (!/\/Type \/Page\b/.test(page.dict)) continue;
    const resourcesRef = ref(page.dict, 'Resources');
    const resources = resourcesRef === null ? page.dict : (objects.get(resourcesRef)?.dict ?? '');
    // Font resource name → its ToUnicode map (null: read the codes as bytes).
    const fonts = new Map<string, Map<number, string> | null>();
    const fontDict = /\/Font <<([^>]*)>>/.exec(resources)?.[1] ?? '';
    for (const [, name, num] of fontDict.matchAll(/\/(\S+) (\d+) 0 R/g)) {
      const toUnicode = ref(objects.get(Number(num))?.dict ?? '', 'ToUnicode');
      const cmap = toUnicode === null ? null : (objects.get(toUnicode)?.stream ?? null);
      fonts.set(name, cmap === null ? null : parseToUnicode(cmap));
    }
    const contentRef = ref(page.dict, 'Contents');
    const content = contentRef === null ? '' : (objects.get(contentRef)?.stream ?? '');
    let map: Map<number, string> | null = null;
    for (const op of content.matchAll(
      /\/(\S+) [\d.]+ Tf|\[((?:[^\]\\]|\\.)*)\]\s*TJ|<([0-9a-fA-F]*)>\s*Tj/g,
    )) {
      if (op[1] !== undefined) {
        map = fonts.get(op[1]) ?? null;
        continue;
      }
      const hexes =
        op[2] !== undefined ? [...op[2].matchAll(/<([0-9a-fA-F]*)>/g)].map((h) => h[1]) : [op[3]];
      lines.push(hexes.map((hex) => decode(hex, map)).join(''));
    }
  }
  return lines.join('\n');
}

function decode(hex: string, map: Map<number, string> | null): string {
  if (map === null) return Buffer.from(hex, 'hex').toString('latin1');
  let out = '';
  for (let i = 0; i + 4 <= hex.length; i += 4)
    out += map.get(parseInt(hex.slice(i, i + 4), 16)) ?? '\ufffd';
  return out;
}

/** A ToUnicode CMap's `bfrange` (with arrays or a start value) and `bfchar` entries. */
function parseToUnicode(cmap: string): Map<number, string> {
  const map = new Map<number, string>();
  // A hex string may hold white space: pdfkit writes a ligature's code points as `<0066 0069>`.
  const utf16 = (hex: string) =>
    String.fromCharCode(
      ...(hex.replace(/\s+/g, '').match(/.{4}/g) ?? []).map((h) => parseInt(h, 16)),
    );
  for (const [, body] of cmap.matchAll(/beginbfrange([\s\S]*?)endbfrange/g)) {
    for (const [, lo, hi, array, start] of body.matchAll(
      /<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*(?:\[([^\]]*)\]|<([0-9a-fA-F]+)>)/g,
    )) {
      const first = parseInt(lo, 16);
      const last = parseInt(hi, 16);
      if (array !== undefined) {
        [...array.matchAll(/<([0-9a-fA-F\s]*)>/g)].forEach((v, i) =>
          map.set(first + i, utf16(v[1])),
        );
      } else {
        const base = parseInt(start, 16);
        for (let code = first; code <= last; code++)
          map.set(code, String.fromCharCode(base + code - first));
      }
    }
  }
  for (const [, body] of cmap.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
    for (const [, code, value] of body.matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F\s]+)>/g)) {
      map.set(parseInt(code, 16), utf16(value));
    }
  }
  return map;
}
