import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { PlainRows } from '../database/plain-rows';
import { InvitationEntity } from './entities/invitation.entity';

export interface UserCredentials {
  id: number;
  sellerId: number;
  email: string;
  passwordHash: string | null;
}

@Injectable()
export class UsersRepository {
  private readonly invitationRows: PlainRows<InvitationEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.invitationRows = new PlainRows(dataSource.getMetadata(InvitationEntity));
  }

  async insert(sellerId: number, email: string, manager: EntityManager): Promise<number> {
    const [row]: Array<{ id: number }> = await manager.query('INSERT INTO seller_users (seller_id, email) VALUES ($1, $2) RETURNING id', [sellerId, email]);
    return row.id;
  }

  async findIdBySellerId(sellerId: number, manager: EntityManager): Promise<number | null> {
    const rows: Array<{ id: number }> = await manager.query('SELECT id FROM seller_users WHERE seller_id = $1 LIMIT 1', [sellerId]);
    return rows[0]?.id ?? null;
  }

  /** The user with this e-mail (any case) with its password hash; null when none. */
  async credentialsByEmail(email: string): Promise<UserCredentials | null> {
    const rows: Array<{ id: number; seller_id: number; email: string; password_hash: string | null }> = await this.dataSource.query(
      'SELECT id, seller_id, email, password_hash FROM seller_users WHERE lower(email) = lower($1)',
      [email],
    );
    const row = rows[0];
    return row ? { id: row.id, sellerId: row.seller_id, email: row.email, passwordHash: row.password_hash } : null;
  }

  async credentialsById(id: number): Promise<UserCredentials | null> {
    const rows: Array<{ id: number; seller_id: number; email: string; password_hash: string | null }> = await this.dataSource.query(
      'SELECT id, seller_id, email, password_hash FROM seller_users WHERE id = $1',
      [id],
    );
    const row = rows[0];
    return row ? { id: row.id, sellerId: row.seller_id, email: row.email, passwordHash: row.password_hash } : null;
  }

  async setPasswordHash(userId: number, passwordHash: string, manager: EntityManager = this.dataSource.manager): Promise<void> {
    await manager.query('UPDATE seller_users SET password_hash = $2, password_changed_at = now() WHERE id = $1', [userId, passwordHash]);
  }

  /**
   * Revokes the user's invitations still usable (unused, unrevoked, unexpired), under the user's row lock
   * so that two invitations issued at once cannot both stay usable: how many were revoked.
   */
  async revokeOpenInvitations(userId: number, manager: EntityManager): Promise<number> {
    await manager.query('SELECT id FROM seller_users WHERE id = $1 FOR UPDATE', [userId]);
    const [, revoked]: [unknown, number] = await manager.query(
      'UPDATE seller_invitations SET revoked_at = now() WHERE user_id = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()',
      [userId],
    );
    return revoked;
  }

  async insertInvitation(userId: number, tokenHash: string, expiresAt: Date, manager: EntityManager = this.dataSource.manager): Promise<void> {
    await manager.query('INSERT INTO seller_invitations (user_id, token_hash, expires_at) VALUES ($1, $2, $3)', [userId, tokenHash, expiresAt]);
  }

  /** The invitation with this token hash if it is unused and unexpired; null otherwise. */
  async findUsableInvitation(tokenHash: string): Promise<InvitationEntity | null> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      'SELECT * FROM seller_invitations WHERE token_hash = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()',
      [tokenHash],
    );
    return rows.length === 0 ? null : this.invitationRows.hydrate(rows[0]);
  }

  /**
   * Marks the invitation used if it still is usable, and every other open invitation of its user with it
   * (a link is good once; a newer one replaces older ones). False when someone used it first.
   */
  async useInvitation(invitation: InvitationEntity, manager: EntityManager): Promise<boolean> {
    const [, affected]: [unknown, number] = await manager.query(
      'UPDATE seller_invitations SET used_at = now() WHERE id = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()',
      [invitation.id],
    );
    if (affected === 0) return false;
    await manager.query('UPDATE seller_invitations SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [invitation.userId]);
    return true;
  }
}
