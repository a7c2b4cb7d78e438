import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The seller dashboard: the seller's user (spec 2.9 user.email) with its password hash, one-time
 * invitations (only a SHA-256 of the token is kept), the session store of connect-pg-simple (created
 * here, never by the library), when each API key pair was last used, and the status history of sales
 * and withdrawals.
 */
export class CreateDashboardAccess1795410000000 implements MigrationInterface {
  name = 'CreateDashboardAccess1795410000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE seller_users (
        id serial PRIMARY KEY,
        seller_id integer NOT NULL CONSTRAINT seller_users_seller_fk REFERENCES sellers (id),
        email varchar NOT NULL,
        password_hash varchar,
        password_changed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT seller_users_one_per_seller UNIQUE (seller_id),
        CONSTRAINT seller_users_password_hash_format CHECK (password_hash IS NULL OR password_hash LIKE '$argon2id$%')
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX seller_users_email_unique ON seller_users (lower(email))`);
    await queryRunner.query(`
      CREATE TABLE seller_invitations (
        id serial PRIMARY KEY,
        user_id integer NOT NULL CONSTRAINT seller_invitations_user_fk REFERENCES seller_users (id),
        token_hash char(64) NOT NULL CONSTRAINT seller_invitations_token_unique UNIQUE,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX seller_invitations_user_idx ON seller_invitations (user_id)`);
    // The table connect-pg-simple expects (its own table.sql), under our name.
    await queryRunner.query(`
      CREATE TABLE dashboard_sessions (
        sid varchar NOT NULL CONSTRAINT dashboard_sessions_pkey PRIMARY KEY,
        sess json NOT NULL,
        expire timestamp(6) NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX dashboard_sessions_expire_idx ON dashboard_sessions (expire)`);
    await queryRunner.query(`ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz`);
    await queryRunner.query(`
      CREATE TABLE sale_status_changes (
        id bigserial PRIMARY KEY,
        sale_id integer NOT NULL CONSTRAINT sale_status_changes_sale_fk REFERENCES sales (id),
        previous_status varchar,
        status varchar NOT NULL,
        changed_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX sale_status_changes_sale_idx ON sale_status_changes (sale_id, id)`);
    await queryRunner.query(`
      CREATE TABLE withdrawal_status_changes (
        id bigserial PRIMARY KEY,
        withdrawal_id integer NOT NULL CONSTRAINT withdrawal_status_changes_withdrawal_fk REFERENCES withdrawals (id),
        previous_status varchar,
        status varchar NOT NULL,
        changed_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX withdrawal_status_changes_withdrawal_idx ON withdrawal_status_changes (withdrawal_id, id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE withdrawal_status_changes`);
    await queryRunner.query(`DROP TABLE sale_status_changes`);
    await queryRunner.query(`ALTER TABLE api_keys DROP COLUMN last_used_at`);
    await queryRunner.query(`DROP TABLE dashboard_sessions`);
    await queryRunner.query(`DROP TABLE seller_invitations`);
    await queryRunner.query(`DROP TABLE seller_users`);
  }
}
