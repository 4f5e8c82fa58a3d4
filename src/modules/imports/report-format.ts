/**
 * Report format sniffing (reference runs-imports-plans.md §4.1): the content decides, never the file
 * name or the content type. Leading whitespace (space, tab, CR, LF) and a byte order mark are skipped;
 * the first other character decides: `<` → JUnit XML, `{` or `[` → Karvio results JSON, anything else
 * → unsupported. Nothing but whitespace (and a BOM) → blank (`empty_upload`).
 *
 * Besides the UTF-8 BOM of the reference, a UTF-16 BOM (`FF FE` / `FE FF`) is recognised too and the
 * characters after it are read as UTF-16, so that a UTF-16 XML report (which the XML parser decodes)
 * keeps importing; a UTF-16 JSON report is sniffed as JSON and then refused as not UTF-8.
 */

export type ReportFormat = 'junit_xml' | 'tms_results_json';
/** What the first significant character says; `unsupported` → 422 `unsupported_report_format`. */
export type SniffedFormat = ReportFormat | 'unsupported';

type Encoding = 'utf8' | 'utf16le' | 'utf16be';

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

function formatOf(code: number): SniffedFormat {
  if (code === 0x3c) return 'junit_xml'; // <
  if (code === 0x7b || code === 0x5b) return 'tms_results_json'; // { [
  return 'unsupported';
}

/** Incremental sniffer: push the upload's bytes in order, read `format` (null while undecided). */
export class FormatSniffer {
  private head: number[] = [];
  private encoding: Encoding | null = null;
  private oddByte: number | null = null;
  /** The decided format; null while only whitespace (and a BOM) has been seen. */
  format: SniffedFormat | null = null;

  /** Feeds a chunk; answers the format once decided (later chunks are ignored). */
  push(chunk: Uint8Array): SniffedFormat | null {
    if (this.format !== null) return this.format;
    let i = 0;
    if (this.encoding === null) {
      while (this.head.length < 3 && i < chunk.length) this.head.push(chunk[i++] ?? 0);
      if (this.head.length < 3) return null;
      this.startFromHead();
      if (this.format !== null) return this.format;
    }
    this.scan(chunk, i);
    return this.format;
  }

  /** Ends the input: the format, or null for a blank upload. */
  end(): SniffedFormat | null {
    if (this.encoding === null) this.startFromHead();
    if (this.format === null && this.oddByte !== null) this.format = 'unsupported';
    return this.format;
  }

  private startFromHead(): void {
    const [b0, b1, b2] = this.head;
    let skip = 0;
    if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) {
      this.encoding = 'utf8';
      skip = 3;
    } else if (b0 === 0xff && b1 === 0xfe) {
      this.encoding = 'utf16le';
      skip = 2;
    } else if (b0 === 0xfe && b1 === 0xff) {
      this.encoding = 'utf16be';
      skip = 2;
    } else {
      this.encoding = 'utf8';
    }
    const rest = Uint8Array.from(this.head.slice(skip));
    this.head = [];
    this.scan(rest, 0);
  }

  private scan(chunk: Uint8Array, from: number): void {
    if (this.encoding === 'utf8') {
      for (let i = from; i < chunk.length; i++) {
        const byte = chunk[i] ?? 0;
        if (isSpace(byte)) continue;
        this.format = formatOf(byte);
        return;
      }
      return;
    }
    for (let i = from; i < chunk.length; i++) {
      const byte = chunk[i] ?? 0;
      if (this.oddByte === null) {
        this.oddByte = byte;
        continue;
      }
      const code =
        this.encoding === 'utf16le' ? this.oddByte | (byte << 8) : (this.oddByte << 8) | byte;
      this.oddByte = null;
      if (isSpace(code)) continue;
      this.format = formatOf(code);
      return;
    }
  }
}

/** Sniffs a whole upload held in memory. */
export function sniffFormat(bytes: Uint8Array): SniffedFormat | null {
  const sniffer = new FormatSniffer();
  sniffer.push(bytes);
  return sniffer.end();
}
