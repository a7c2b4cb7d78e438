import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';

/** Rate limit per API key pair (platform.md §6): counted per public key; requests without one are not counted. */
@Injectable()
export class KeyPairThrottlerGuard extends ThrottlerGuard {
  protected override async getTracker(request: { headers: Record<string, unknown> }): Promise<string> {
    return String(request.headers['x-api-public-key']);
  }

  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>();
    return !request.headers['x-api-public-key'] || super.shouldSkip(context);
  }
}
