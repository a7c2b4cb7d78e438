import { Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Request, Response } from 'express';
import { DashboardExceptionFilter } from '../../common/filters/dashboard-exception.filter';
import { SellerService } from '../../seller/seller.service';
import { UsersService } from '../../users/users.service';
import { CurrentUser, DashboardAuthGuard, DashboardUser } from '../dashboard-auth.guard';
import { formErrorsOf, formText, NO_ERRORS, startSession } from '../forms';
import { AttemptSubject, LoginLimiter } from '../login-limiter';
import { DashboardSessionStore } from '../session-store';

/** Sign-in, invitations, password change and sign-out of the seller dashboard. */
@ApiExcludeController()
@Controller('dashboard')
@UseFilters(DashboardExceptionFilter)
export class DashboardAuthController {
  constructor(
    private readonly users: UsersService,
    private readonly sellers: SellerService,
    private readonly limiter: LoginLimiter,
    private readonly sessions: DashboardSessionStore,
  ) {}

  @Get('login')
  loginPage(@Req() request: Request, @Res() response: Response): void {
    if (request.session.userId) return response.redirect(303, '/dashboard');
    response.render('login', { email: '', errors: NO_ERRORS });
  }

  @Post('login')
  async login(@Req() request: Request, @Res() response: Response): Promise<void> {
    const email = formText(request, 'email').trim();
    const password = formText(request, 'password');
    const address = request.ip ?? 'unknown';
    const fields: Record<string, string> = {};
    if (!email) fields.email = 'Informe o e-mail.';
    if (!password) fields.password = 'Informe a senha.';
    if (Object.keys(fields).length > 0) return response.status(400).render('login', { email, errors: { fields, form: null } });

    // Counted before the password is checked, against the account PostgreSQL finds for what was typed.
    const account = await this.users.findAccount(email);
    const subject: AttemptSubject = account ? { userId: account.id } : { unknownEmail: email };
    const wait = await this.limiter.attempt('sign-in', subject, address);
    if (wait > 0) return tooManyAttempts(response, wait, 'Muitas tentativas de entrar', 'login', { email, errors: NO_ERRORS });
    const user = await this.users.verify(account, password);
    if (!user) {
      return response.status(401).render('login', { email, errors: { fields: { password: 'E-mail ou senha incorretos.' }, form: null } });
    }
    await this.limiter.succeeded('sign-in', subject, address);
    if ((await this.sellers.identity(user.sellerId)).blocked) {
      return response.status(403).render('login', { email, errors: { fields: {}, form: 'Esta conta está bloqueada. Fale com o suporte.' } });
    }
    await startSession(request, user.userId, user.sellerId);
    response.redirect(303, '/dashboard');
  }

  @Post('logout')
  async logout(@Req() request: Request, @Res() response: Response): Promise<void> {
    await new Promise<void>((resolve) => request.session.destroy(() => resolve()));
    response.clearCookie('gw_dashboard', { path: '/dashboard' });
    response.redirect(303, '/dashboard/login');
  }

  @Get('invitation/:token')
  async invitationPage(@Param('token') token: string, @Res() response: Response): Promise<void> {
    await this.users.assertInvitationUsable(token);
    response.render('invitation', { token, errors: NO_ERRORS });
  }

  @Post('invitation/:token')
  async acceptInvitation(@Param('token') token: string, @Req() request: Request, @Res() response: Response): Promise<void> {
    await this.users.assertInvitationUsable(token);
    const password = formText(request, 'password');
    if (password !== formText(request, 'passwordConfirmation')) {
      return response.status(400).render('invitation', { token, errors: { fields: { passwordConfirmation: 'As senhas não conferem.' }, form: null } });
    }
    let user;
    try {
      user = await this.users.acceptInvitation(token, password);
    } catch (error) {
      return response.status(400).render('invitation', { token, errors: formErrorsOf(error) });
    }
    // A password set through a link (a first one, or a forgotten one): any session opened before is over.
    await this.sessions.endSessionsOf(user.userId, null);
    await startSession(request, user.userId, user.sellerId);
    response.redirect(303, '/dashboard');
  }

  @Get('account/password')
  @UseGuards(DashboardAuthGuard)
  passwordPage(@Res() response: Response): void {
    response.render('password', { errors: NO_ERRORS, changed: false });
  }

  @Post('account/password')
  @UseGuards(DashboardAuthGuard)
  async changePassword(@CurrentUser() user: DashboardUser, @Req() request: Request, @Res() response: Response): Promise<void> {
    const next = formText(request, 'newPassword');
    if (next !== formText(request, 'newPasswordConfirmation')) {
      return response.status(400).render('password', { errors: { fields: { newPasswordConfirmation: 'As senhas não conferem.' }, form: null }, changed: false });
    }
    // The current password is a password guess like a sign-in's: limited the same way, per user and address.
    const address = request.ip ?? 'unknown';
    const subject: AttemptSubject = { userId: user.userId };
    const wait = await this.limiter.attempt('password-change', subject, address);
    if (wait > 0) return tooManyAttempts(response, wait, 'Muitas tentativas de trocar a senha', 'password', { errors: NO_ERRORS, changed: false });
    try {
      await this.users.changePassword(user.userId, formText(request, 'currentPassword'), next);
    } catch (error) {
      return response.status(400).render('password', { errors: formErrorsOf(error), changed: false });
    }
    await this.limiter.succeeded('password-change', subject, address);
    // A new session id after a credential change, and every other session of the user ends; the page
    // below is rendered with the new session's CSRF token.
    await startSession(request, user.userId, user.sellerId);
    await this.sessions.endSessionsOf(user.userId, request.session.id); // signed out everywhere else
    response.locals.csrfToken = request.session.csrfToken;
    response.render('password', { errors: NO_ERRORS, changed: true });
  }
}

/** 429 with Retry-After, the page rendered again with the wait in minutes. */
function tooManyAttempts(response: Response, waitSeconds: number, what: string, view: string, locals: { errors: typeof NO_ERRORS } & Record<string, unknown>): void {
  response.setHeader('Retry-After', String(waitSeconds));
  const minutes = Math.ceil(waitSeconds / 60);
  response.status(429).render(view, {
    ...locals,
    errors: { fields: {}, form: `${what}. Tente de novo em ${minutes} minuto${minutes > 1 ? 's' : ''}.` },
  });
}
