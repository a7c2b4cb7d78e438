import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A new invitation link revokes every earlier one still unused (issue 19, finding 3): an operator
 * re-issues a link because the old one leaked, and the leaked one must stop working at once.
 */
export class AddInvitationRevocation1795460000000 implements MigrationInterface {
  name = 'AddInvitationRevocation1795460000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE seller_invitations ADD COLUMN revoked_at timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE seller_invitations DROP COLUMN revoked_at`);
  }
}
