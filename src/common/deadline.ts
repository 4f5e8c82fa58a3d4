/** Thrown by {@link withDeadline} when the work did not finish in time. */
export class DeadlineExceeded extends Error {
  constructor(readonly ms: number) {
    super(`No answer within ${ms} ms`);
  }
}

/**
 * `work`, or a DeadlineExceeded rejection after `ms`, whichever comes first. The work is not
 * stopped (give it its own deadline so it ends too); a later failure of it is handled here, never
 * unhandled.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(ms)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
