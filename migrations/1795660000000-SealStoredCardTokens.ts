import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 39's subscriptions on stored cards through Cielo: a subscription keeps its acquirer's card token
 * (Cielo's CardToken, which charges the card without its CVV) sealed with ENCRYPTION_KEY, never in clear.
 * The sandbox's own tokens stay in `card_token`.
 */
export class SealStoredCardTokens1795660000000 implements MigrationInterface {
  name = 'SealStoredCardTokens1795660000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE subscriptions ADD COLUMN card_token_sealed text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE subscriptions DROP COLUMN card_token_sealed`);
  }
}
