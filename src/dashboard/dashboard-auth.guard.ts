import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import { Request, Response } from 'express';
import { DomainError } from '../domain/domain-error';
import { SellerService } from '../seller/seller.service';

/** Who is signed in: the user, its seller, and what the page header shows. */
export interface DashboardUser {
  userId: number;
  sellerId: number;
  name: string;
  email: string;
}

const USER_KEY = 'dashboardUser';

/**
 * Every dashboard page but sign-in and invitations: a session with a user, whose seller is not
 * blocked. The seller id comes only from the session, so a page only ever reads its own seller's data.
 */
@Injectable()
export class DashboardAuthGuard implements CanActivate {
  constructor(private readonly sellers: SellerService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request & Record<string, unknown>>();
    const response = context.switchToHttp().getResponse<Response>();
    const { userId, sellerId } = request.session ?? {};
    if (!userId || !sellerId) throw new DomainError('UNAUTHORIZED', 'Entre para continuar.');
    // Only a seller that is gone or blocked ends the session. Any other failure (the database busy for a
    // moment) goes to the filter, a 503 page with Retry-After, and the session stays.
    const seller = await this.sellers.identity(sellerId).catch((error: unknown) => {
      if (error instanceof DomainError && error.code === 'NOT_FOUND') return null;
      throw error;
    });
    if (!seller || seller.blocked) {
      await new Promise<void>((resolve) => request.session.destroy(() => resolve()));
      throw new DomainError('UNAUTHORIZED', 'Esta conta está bloqueada.');
    }
    const user: DashboardUser = { userId, sellerId, name: seller.name, email: seller.email };
    request[USER_KEY] = user;
    response.locals.user = user;
    response.locals.section = request.path.split('/')[2] ?? ''; // the navigation's current section
    return true;
  }
}

/** The signed-in user that DashboardAuthGuard resolved. */
export const CurrentUser = createParamDecorator(
  (_data: unknown, context: ExecutionContext): DashboardUser => context.switchToHttp().getRequest<Record<string, DashboardUser>>()[USER_KEY],
);
