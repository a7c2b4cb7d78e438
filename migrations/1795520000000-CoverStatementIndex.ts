import { MigrationInterface, QueryRunner } from 'typeorm';

const STATEMENT_COLUMNS = 'kind, reference_type, reference_id, available_delta_cents, blocked_delta_cents, available_after_cents, blocked_after_cents';

/**
 * The seller's statement (GET /api/public/balance/statement) read from its index alone (issue 24): the
 * index on (seller_id, created_at DESC, id DESC) carries every column a statement line shows, so a page
 * is an index-only range on the seller (and its cursor), never a visit of the table's pages. Postings
 * are append-only, so their pages stay all-visible once vacuumed. ledger_postings_created_idx goes: no
 * query reads postings by date alone, and for a seller holding most of the table the planner took a
 * backward walk of it, filtered on the seller and re-sorted, over the statement's range.
 */
export class CoverStatementIndex1795520000000 implements MigrationInterface {
  name = 'CoverStatementIndex1795520000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ledger_postings_created_idx`);
    await queryRunner.query(`DROP INDEX ledger_postings_statement_idx`);
    await queryRunner.query(`CREATE INDEX ledger_postings_statement_idx ON ledger_postings (seller_id, created_at DESC, id DESC) INCLUDE (${STATEMENT_COLUMNS})`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ledger_postings_statement_idx`);
    await queryRunner.query(`CREATE INDEX ledger_postings_statement_idx ON ledger_postings (seller_id, created_at DESC, id DESC)`);
    await queryRunner.query(`CREATE INDEX ledger_postings_created_idx ON ledger_postings (created_at)`);
  }
}
