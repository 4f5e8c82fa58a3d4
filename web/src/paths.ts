/** Pure rules about addresses and API paths (no DOM, no Preact: the unit tests load them in Node). */

/** A segment of the address decoded; as typed when it is not valid percent-encoding (`%E0%A4%A` threw, blanking the page). */
export function decodeSegment(segment: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    return segment;
  }
  // An id goes into an API path as one segment: a `/`, `?`, `#` or `%` it decodes to stays escaped
  // (`#/runs/<id>%2Fexport` requested the run's export and crashed the run page).
  return decoded.replace(/[%/?#]/g, (c) => encodeURIComponent(c));
}

/**
 * True when an API path holds a `.` or `..` segment: an id taken from the address (`#/runs/..%2Fusers`)
 * would otherwise lead the request to another resource once the URL is normalised.
 */
export function hasDotSegment(path: string): boolean {
  return path
    .split('?', 1)[0]
    .split('/')
    .some((segment) => segment === '.' || segment === '..');
}
