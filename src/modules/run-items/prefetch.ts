/**
 * Builds the values of a lazy iterator ahead of their consumer, between other work: while a caller
 * awaits a statement of its own (the database working, this process idle), the values are pulled
 * into a buffer {@link PREFETCH_SLICE} at a time, one slice per turn of the event loop
 * (`setImmediate`), so the connection's I/O is still served between two slices. `rest()` then
 * yields the buffered values and pulls the others on demand; the order is the iterator's.
 */

/** Values pulled per turn of the event loop while prefetching. */
export const PREFETCH_SLICE = 64;

export interface Prefetched<T> {
  /** Stops prefetching; the values in order: the buffered ones, then the rest as they are read. */
  rest(): Generator<T, void, undefined>;
  /** Stops prefetching (nothing is read any more). */
  stop(): void;
}

export function prefetch<T>(source: Iterator<T>, slice = PREFETCH_SLICE): Prefetched<T> {
  const buffer: T[] = [];
  let done = false;
  let stopped = false;
  let failed = false;
  let failure: unknown;
  const pump = (): void => {
    if (stopped || done || failed) return;
    try {
      for (let i = 0; i < slice; i++) {
        const next = source.next();
        if (next.done === true) {
          done = true;
          return;
        }
        buffer.push(next.value);
      }
    } catch (error) {
      failed = true;
      failure = error;
      return;
    }
    setImmediate(pump);
  };
  setImmediate(pump);
  return {
    *rest() {
      stopped = true;
      if (failed) throw failure;
      for (let i = 0; i < buffer.length; i++) yield buffer[i] as T;
      buffer.length = 0;
      if (done) return;
      for (let next = source.next(); next.done !== true; next = source.next()) yield next.value;
    },
    stop() {
      stopped = true;
    },
  };
}
