/**
 * The largest raw body of a multipart upload (an import request), shared by the upload reader that
 * refuses a larger one (413) and the idempotency layer that reads an unread body to its end for its
 * fingerprint: both must agree on the bound.
 */

/** Room for the multipart framing and the few small form fields next to the files. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/** Room for the framing of each further file part (boundary, headers with a long file name). */
export const PART_OVERHEAD_BYTES = 1024;

/** The limits of one import request (MAX_UPLOAD_BYTES, MAX_UPLOAD_FILES). */
export interface UploadLimits {
  /** Decompressed bytes of all files together. */
  maxBytes: number;
  /** `file` parts. */
  maxFiles: number;
}

/** The largest raw body an import request may have: the files, plus the multipart framing. */
export function maxBodyBytes(limits: UploadLimits): number {
  return limits.maxBytes + MULTIPART_OVERHEAD_BYTES + limits.maxFiles * PART_OVERHEAD_BYTES;
}
