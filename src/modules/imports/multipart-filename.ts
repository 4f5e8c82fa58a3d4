import { Transform, TransformCallback } from 'node:stream';

const MAX_HEADER_BLOCK = 16 * 1024;

/** `; filename=""` or `; filename*=<charset>'<language>'` with nothing after it. */
const EMPTY_FILENAME =
  /;\s*filename\s*=\s*""(?=\s*(?:;|$))|;\s*filename\*\s*=\s*[^;'"]*'[^;']*'(?=\s*(?:;|$))/gi;

/**
 * multer ignores a file part that carries no filename (`Content-Disposition: form-data; name="file"`
 * with `application/octet-stream`, which is what superagent's `.attach('file', buffer)` sends), or an
 * empty one (`filename=""`).
 * This transform sits between the (decoded) request body and multer's parser (`upload.ts` feeds
 * it through multer's documented `streamHandler` option) and adds `filename="<fallback>"` to the
 * header block of such a part named `field`. It only ever looks at part header blocks — the bytes
 * right after a `--boundary` delimiter up to the blank line — never at part contents, which by
 * definition cannot contain the delimiter.
 */
export function addMissingFilename(boundary: string, field: string, fallback: string): Transform {
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  const headerEnd = Buffer.from('\r\n\r\n', 'latin1');
  let pending: Buffer = Buffer.alloc(0);
  let inHeaders = false;

  const rewrite = (block: Buffer): Buffer => {
    const text = block.toString('latin1');
    const fixed = text.replace(/^(content-disposition:[^\r\n]*)$/im, (line: string) => {
      const names = /;\s*name="([^"]*)"/i.exec(line);
      if (!names || names[1] !== field) return line;
      // An empty name (`filename=""`, `filename*=UTF-8''`) counts as none: multer drops such a
      // part, so its report would silently not be imported.
      const named = line.replace(EMPTY_FILENAME, '');
      if (/;\s*filename\*?=/i.test(named)) return named;
      return `${named}; filename="${fallback}"`;
    });
    return fixed === text ? block : Buffer.from(fixed, 'latin1');
  };

  const drain = (push: (b: Buffer) => void, final: boolean): void => {
    for (;;) {
      if (!inHeaders) {
        const at = pending.indexOf(delimiter);
        if (at === -1) {
          const keep = final ? 0 : Math.min(pending.length, delimiter.length);
          push(pending.subarray(0, pending.length - keep));
          pending = pending.subarray(pending.length - keep);
          return;
        }
        push(pending.subarray(0, at + delimiter.length));
        pending = pending.subarray(at + delimiter.length);
        inHeaders = true;
      } else {
        const end = pending.indexOf(headerEnd);
        if (end === -1) {
          if (final || pending.length > MAX_HEADER_BLOCK) {
            push(pending);
            pending = Buffer.alloc(0);
            inHeaders = false;
          }
          return;
        }
        push(rewrite(pending.subarray(0, end + headerEnd.length)));
        pending = pending.subarray(end + headerEnd.length);
        inHeaders = false;
      }
    }
  };

  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      drain((b) => b.length > 0 && this.push(b), false);
      cb();
    },
    flush(cb: TransformCallback) {
      drain((b) => b.length > 0 && this.push(b), true);
      cb();
    },
  });
}
