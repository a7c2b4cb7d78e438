import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import * as argon2 from 'argon2';
import { DataSource, EntityManager } from 'typeorm';
import { sha256Hex } from '../common/crypto/secrets';
import { AppConfig } from '../config/app-config';
import { DomainError, RequestValidationError } from '../domain/domain-error';
import { passwordProblem } from '../domain/password-policy';
import { UsersRepository, UserCredentials } from './users.repository';

/** An invitation link sets the first password within this many hours. */
export const INVITATION_TTL_HOURS = 72;

export interface Invitation {
  /** The one-time link; shown once, only a hash of its token is stored. */
  url: string;
  expiresAt: string;
  /** Earlier links of the user still unused, revoked by this one. */
  revokedInvitations: number;
}

export interface SignedInUser {
  userId: number;
  sellerId: number;
  email: string;
}

/** A hash to verify against when the e-mail is unknown, so that timing does not tell which e-mails exist. */
const DECOY_HASH = argon2.hash('decoy-password-never-used');

/**
 * The dashboard's users (spec 2.9 user): one per seller, created with the seller and an invitation
 * link that sets the first password; passwords are argon2id hashes.
 */
@Injectable()
export class UsersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersRepository,
    private readonly config: AppConfig,
  ) {}

  /** The seller's user and its first invitation, in the caller's transaction (seller creation). */
  async createWithInvitation(manager: EntityManager, sellerId: number, email: string): Promise<Invitation> {
    const userId = await this.users.insert(sellerId, email, manager);
    return this.issueInvitation(userId, manager);
  }

  /** A new invitation for the seller's user (creating the user for sellers made before the dashboard). */
  async invite(sellerId: number, email: string): Promise<Invitation> {
    return this.dataSource.transaction(async (manager) => {
      const userId = (await this.users.findIdBySellerId(sellerId, manager)) ?? (await this.users.insert(sellerId, email, manager));
      return this.issueInvitation(userId, manager);
    });
  }

  /** Sets the first (or a forgotten) password through an invitation; the link is good once. */
  async acceptInvitation(token: string, password: string): Promise<SignedInUser> {
    const invitation = await this.usableInvitation(token);
    const problem = passwordProblem(password);
    if (problem) throw new RequestValidationError([], [{ field: 'password', message: problem }]);
    const hash = await argon2.hash(password, { type: argon2.argon2id });
    const used = await this.dataSource.transaction(async (manager) => {
      if (!(await this.users.useInvitation(invitation, manager))) return false;
      await this.users.setPasswordHash(invitation.userId, hash, manager);
      return true;
    });
    if (!used) throw new DomainError('NOT_FOUND', 'Este convite é inválido, já foi usado ou expirou.');
    const user = await this.users.credentialsById(invitation.userId);
    if (!user) throw new DomainError('NOT_FOUND', 'Este convite é inválido, já foi usado ou expirou.');
    return { userId: user.id, sellerId: user.sellerId, email: user.email };
  }

  /** NOT_FOUND unless the token is an unused, unexpired invitation. */
  async assertInvitationUsable(token: string): Promise<void> {
    await this.usableInvitation(token);
  }

  /** The account for this e-mail as PostgreSQL matches it (`lower(email)`), or null: what sign-in attempts are counted against. */
  async findAccount(email: string): Promise<UserCredentials | null> {
    return typeof email === 'string' && email.length <= 320 ? this.users.credentialsByEmail(email.trim()) : null;
  }

  /** The user if `password` is that account's, or null (no account, no password yet, or a wrong one); as slow either way. */
  async verify(account: UserCredentials | null, password: string): Promise<SignedInUser | null> {
    const hash = account?.passwordHash ?? (await DECOY_HASH);
    const matches = typeof password === 'string' && password.length <= 1024 && (await argon2.verify(hash, password).catch(() => false));
    if (!account || !account.passwordHash || !matches) return null;
    return { userId: account.id, sellerId: account.sellerId, email: account.email };
  }

  /** Whether `password` is the user's current one (the password change asks for it). */
  async isCurrentPassword(userId: number, password: string): Promise<boolean> {
    const user = await this.users.credentialsById(userId);
    return Boolean(user?.passwordHash) && (await argon2.verify(user?.passwordHash as string, password ?? '').catch(() => false));
  }

  async changePassword(userId: number, currentPassword: string, newPassword: string): Promise<void> {
    if (!(await this.isCurrentPassword(userId, currentPassword))) {
      throw new RequestValidationError([], [{ field: 'currentPassword', message: 'A senha atual não confere.' }]);
    }
    const problem = passwordProblem(newPassword);
    if (problem) throw new RequestValidationError([], [{ field: 'newPassword', message: problem }]);
    await this.users.setPasswordHash(userId, await argon2.hash(newPassword, { type: argon2.argon2id }));
  }

  private async usableInvitation(token: string) {
    const invitation = typeof token === 'string' && /^[A-Za-z0-9_-]{43}$/.test(token) ? await this.users.findUsableInvitation(sha256Hex(token)) : null;
    if (!invitation) throw new DomainError('NOT_FOUND', 'Este convite é inválido, já foi usado ou expirou.');
    return invitation;
  }

  private async issueInvitation(userId: number, manager: EntityManager): Promise<Invitation> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + INVITATION_TTL_HOURS * 3_600_000);
    // A new link replaces the earlier ones at once: an operator re-issues one because it leaked.
    const revokedInvitations = await this.users.revokeOpenInvitations(userId, manager);
    await this.users.insertInvitation(userId, sha256Hex(token), expiresAt, manager);
    return { url: `${this.config.dashboardBaseUrl}/dashboard/invitation/${token}`, expiresAt: expiresAt.toISOString(), revokedInvitations };
  }
}
