import { FormatSniffer, sniffFormat } from './report-format';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const utf16le = (text: string) =>
  Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
const utf16be = (text: string) =>
  Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);

describe('sniffFormat (reference §4.1)', () => {
  it.each([
    ['<testsuite/>', 'junit_xml'],
    ['<?xml version="1.0"?><testsuites/>', 'junit_xml'],
    ['{"cases": []}', 'tms_results_json'],
    ['[1]', 'tms_results_json'],
    [' \t\r\n {', 'tms_results_json'],
    ['\n\n<a/>', 'junit_xml'],
    ['this is not xml at all', 'unsupported'],
    ['  x{', 'unsupported'],
    ['\u00a0{', 'unsupported'], // a no-break space is not whitespace here
    ['{', 'tms_results_json'],
    ['<', 'junit_xml'],
  ])('%j → %s', (text, expected) => {
    expect(sniffFormat(Buffer.from(text, 'utf8'))).toBe(expected);
  });

  it('skips a UTF-8 byte order mark and the whitespace after it', () => {
    expect(sniffFormat(Buffer.concat([BOM, Buffer.from('  \n{"cases":[]}')]))).toBe(
      'tms_results_json',
    );
    expect(sniffFormat(Buffer.concat([BOM, Buffer.from('<testsuite/>')]))).toBe('junit_xml');
    expect(sniffFormat(Buffer.concat([BOM, Buffer.from('plain')]))).toBe('unsupported');
  });

  it('answers null (blank) for nothing, whitespace only, or a BOM and whitespace', () => {
    expect(sniffFormat(Buffer.alloc(0))).toBeNull();
    expect(sniffFormat(Buffer.from(' \r\n\t '))).toBeNull();
    expect(sniffFormat(BOM)).toBeNull();
    expect(sniffFormat(Buffer.concat([BOM, Buffer.from('   ')]))).toBeNull();
    expect(sniffFormat(utf16le('  \n'))).toBeNull();
  });

  it('a BOM only counts at the very start; a partial BOM is content', () => {
    expect(sniffFormat(Buffer.concat([Buffer.from(' '), BOM, Buffer.from('{')]))).toBe(
      'unsupported',
    );
    expect(sniffFormat(Buffer.from([0xef, 0xbb]))).toBe('unsupported');
  });

  it('reads the characters after a UTF-16 byte order mark as UTF-16', () => {
    expect(sniffFormat(utf16le(' <testsuite/>'))).toBe('junit_xml');
    expect(sniffFormat(utf16be('\n<testsuite/>'))).toBe('junit_xml');
    expect(sniffFormat(utf16le('{}'))).toBe('tms_results_json');
    expect(sniffFormat(utf16be('text'))).toBe('unsupported');
    // A dangling odd byte after the BOM is not whitespace.
    expect(sniffFormat(Buffer.from([0xff, 0xfe, 0x20]))).toBe('unsupported');
  });

  it('gives the same answer when fed one byte at a time', () => {
    const inputs = [
      Buffer.concat([BOM, Buffer.from('  {"cases":[]}')]),
      Buffer.from('\n\n<testsuite/>'),
      Buffer.from('  plain text'),
      utf16le('  <a/>'),
      Buffer.from('   '),
      Buffer.from('{'),
    ];
    for (const input of inputs) {
      const sniffer = new FormatSniffer();
      for (const byte of input) sniffer.push(Uint8Array.of(byte));
      expect(sniffer.end()).toBe(sniffFormat(input));
    }
  });

  it('decides as soon as the first significant character arrives', () => {
    const sniffer = new FormatSniffer();
    expect(sniffer.push(Buffer.from('   '))).toBeNull();
    expect(sniffer.push(Buffer.from(' {'))).toBe('tms_results_json');
    expect(sniffer.push(Buffer.from('<'))).toBe('tms_results_json');
    expect(sniffer.end()).toBe('tms_results_json');
  });
});
