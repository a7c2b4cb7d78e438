import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Request } from 'express';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/domain-error';

/** The sandbox routes exist only while the sandbox is some rail's provider; otherwise they answer 404. */
@Injectable()
export class SandboxOnlyGuard implements CanActivate {
  constructor(private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    if (this.config.sandboxConfigured) return true;
    const request = context.switchToHttp().getRequest<Request>();
    throw new DomainError('NOT_FOUND', `Route not found: ${request.method} ${request.path}`);
  }
}
