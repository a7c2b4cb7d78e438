import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { addDays, endOfBrazilDay } from '../domain/dates';
import { DomainError } from '../domain/domain-error';
import { BalanceView, LedgerService, StatementCursor } from '../ledger/ledger.service';
import { StatementResponse } from './dto/statement.dto';

export type { BalanceView } from '../ledger/ledger.service';

/** The balance of spec 2.8, read through the ledger (which owns the balances table). */
@Injectable()
export class BalanceService {
  constructor(private readonly ledger: LedgerService) {}

  balanceOf(sellerId: number, manager?: EntityManager): Promise<BalanceView> {
    return this.ledger.balanceOf(sellerId, manager);
  }

  /**
   * A page of the seller's statement: the movements of its available and blocked money, newest first,
   * in a date range of Brazil days, with the balance after each one.
   */
  async statement(sellerId: number, query: { from?: string; to?: string; cursor?: string; limit?: number }): Promise<StatementResponse> {
    if (query.from && query.to && query.from > query.to) throw new DomainError('VALIDATION_ERROR', 'from must not be after to', { field: 'from' });
    const limit = query.limit ?? 50;
    const rows = await this.ledger.statementPage(sellerId, {
      from: query.from ? addDays(endOfBrazilDay(query.from), -1) : undefined,
      before: query.to ? endOfBrazilDay(query.to) : undefined,
      after: query.cursor ? decodeCursor(query.cursor) : undefined,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      statement: page.map((row) => ({
        id: row.id,
        createdAt: row.createdAt.toISOString(),
        kind: row.kind,
        // A seller's postings name a sale or a withdrawal (a Pix receipt's belong to no seller).
        reference: { type: row.referenceType as 'SALE' | 'WITHDRAWAL', id: row.referenceId },
        available: row.availableDeltaCents,
        blocked: row.blockedDeltaCents,
        availableAfter: row.availableAfterCents,
        blockedAfter: row.blockedAfterCents,
      })),
      nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1].cursor) : null,
    };
  }

  /** Creates the zero balance of a new seller inside the seller's creation transaction. */
  async open(sellerId: number, manager: EntityManager): Promise<void> {
    await this.ledger.openBalance(sellerId, manager);
  }
}

/** The cursor a client passes back: opaque (base64url of the last line's exact time and id). */
function encodeCursor(cursor: StatementCursor): string {
  return Buffer.from(JSON.stringify([cursor.at, cursor.id])).toString('base64url');
}

function decodeCursor(text: string): StatementCursor {
  try {
    const [at, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof at === 'string' && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/.test(at) && Number.isSafeInteger(id) && (id as number) > 0) {
      return { at, id: id as number };
    }
  } catch {
    // not a cursor of ours: refused below
  }
  throw new DomainError('VALIDATION_ERROR', 'cursor must be the nextCursor of a previous page', { field: 'cursor' });
}
