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
    const expected = this.config.adminToken;
    const request = context.switchToHttp().getRequest<Request>();
    if (expected === null) {
      throw new DomainError('NOT_FOUND', `Route not found: ${request.method} ${request.path}`);
    }
    const given = request.header('x-admin-token');
    if (!given || !constantTimeEqual(given, expected)) {
      throw new DomainError('UNAUTHORIZED', 'Missing or invalid X-Admin-Token');
    }
    return true;
  }
}
