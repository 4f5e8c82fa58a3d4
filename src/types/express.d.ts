import type { AuthenticatedUser } from '../common/auth/authenticated-user';
import type { ProjectAccess } from '../common/access/project-access';

declare global {
  namespace Express {
    interface Request {
      requestId?: string;
      user?: AuthenticatedUser;
      access?: ProjectAccess;
      /** A body problem (415, 413, malformed JSON) raised by the RolesGuard after authentication. */
      deferredError?: unknown;
    }
  }
}
export {};
