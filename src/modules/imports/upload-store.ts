/**
 * The stored upload of a background import (issue #18 §3): the request's files, decompressed,
 * written to PostgreSQL (`import_uploads`) in chunks of about {@link UPLOAD_CHUNK_BYTES} while the
 * request is read, in its transaction; the job reads them back in order.
 *
 * The multipart parser runs outside the request's async context, so it does not write itself: its
 * sinks hand full chunks to an {@link UploadChunkQueue}, which the service drains in the request's
 * context (its transaction). At most {@link MAX_PENDING_CHUNKS} chunks wait: past that, the part's
 * stream is paused until the database took one (bounded memory, whatever the upload size).
 */
import type { PartSink, ReadReport } from './upload';

/** Bytes per stored chunk (a chunk holds at least this much, but for a file's last one). */
export const UPLOAD_CHUNK_BYTES = 1024 * 1024;
/** Chunks read but not yet written before the upload waits. */
export const MAX_PENDING_CHUNKS = 4;
/** Chunks the job reads back per statement. */
export const READ_CHUNKS_PER_QUERY = 8;

export interface StoredChunk {
  fileIndex: number;
  seq: number;
  data: Buffer;
}

/** Chunks between the parts being read and the statements writing them (one consumer). */
export class UploadChunkQueue {
  private readonly chunks: StoredChunk[] = [];
  private readonly waitingForSpace: Array<() => void> = [];
  private wakeConsumer: (() => void) | null = null;
  private closed = false;
  private failed = false;

  /** Queues a chunk; a promise when the producer should wait (too many pending). */
  push(chunk: StoredChunk): Promise<void> | null {
    if (this.failed || this.closed) return null;
    this.chunks.push(chunk);
    this.wake();
    if (this.chunks.length < MAX_PENDING_CHUNKS) return null;
    return new Promise<void>((resolve) => this.waitingForSpace.push(resolve));
  }

  /** No more chunks will come. */
  close(): void {
    this.closed = true;
    this.wake();
  }

  /** The consumer stopped: pending and later chunks are dropped, producers released. */
  fail(): void {
    this.failed = true;
    this.chunks.length = 0;
    for (const resolve of this.waitingForSpace.splice(0)) resolve();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<StoredChunk> {
    for (;;) {
      const chunk = this.chunks.shift();
      if (chunk !== undefined) {
        if (this.chunks.length < MAX_PENDING_CHUNKS) this.waitingForSpace.shift()?.();
        yield chunk;
        continue;
      }
      if (this.closed || this.failed) return;
      await new Promise<void>((resolve) => {
        this.wakeConsumer = resolve;
      });
    }
  }

  private wake(): void {
    const wake = this.wakeConsumer;
    this.wakeConsumer = null;
    wake?.();
  }
}

/** A part's sink that cuts its bytes into chunks for the queue (the format is read by the job). */
export function storingSink(queue: UploadChunkQueue, fileIndex: number): PartSink {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let seq = 0;
  const flush = (): Promise<void> | null => {
    const data = Buffer.concat(held);
    held = [];
    heldBytes = 0;
    return queue.push({ fileIndex, seq: seq++, data });
  };
  return {
    write(chunk) {
      held.push(chunk);
      heldBytes += chunk.length;
      return heldBytes >= UPLOAD_CHUNK_BYTES ? flush() : null;
    },
    async end(): Promise<ReadReport> {
      if (heldBytes > 0) await flush();
      return { format: null, report: null, parseError: null };
    },
    abort() {
      held = [];
      heldBytes = 0;
    },
  };
}
