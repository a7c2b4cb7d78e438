import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Request } from 'express';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/domain-error';
import { constantTimeEqual } from '../crypto/secrets';

/** The operator API (platform.md §2): X-Admin-Token compared in constant time; every route 404 when ADMIN_TOKEN is unset. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    checkAdminToken(this.config.adminToken, context.switchToHttp().getRequest<Request>());
    return true;
  }
}

/** Throws the operator API's refusal of the request (404 with no ADMIN_TOKEN set, 401 without the right token). */
export function checkAdminToken(expected: string | null, request: Request): void {
  if (expected === null) {
    throw new DomainError('NOT_FOUND', `Route not found: ${request.method} ${request.path}`);
  }
  const given = request.header('x-admin-token');
  if (!given || !constantTimeEqual(given, expected)) {
    throw new DomainError('UNAUTHORIZED', 'Missing or invalid X-Admin-Token');
  }
}
