import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { AppException } from '../errors/app-exception';
import { AuthenticatedUser } from './authenticated-user';
import { ProjectAccess } from '../access/project-access';

/** The authenticated caller (set by the RolesGuard). */
export const CurrentUser = createParamDecorator((_data: unknown, ctx: ExecutionContext): AuthenticatedUser => {
  const user = ctx.switchToHttp().getRequest<Request>().user;
  if (!user) throw new AppException('unauthorized', 'Authentication is required');
  return user;
});

/** The caller's access to the addressed project (set by the RolesGuard for project endpoints). */
export const CurrentAccess = createParamDecorator((_data: unknown, ctx: ExecutionContext): ProjectAccess => {
  const access = ctx.switchToHttp().getRequest<Request>().access;
  if (!access) throw new AppException('forbidden', 'No project access was resolved for this route');
  return access;
});
