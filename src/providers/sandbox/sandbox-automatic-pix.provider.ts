import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { addDaysToDate, brazilDate } from '../../domain/dates';
import { buildPixBrCode } from '../../domain/pix-br-code';
import { cents, Cents } from '../../domain/money';
import {
  AutomaticPixProvider,
  ChargeAttempt,
  RecurrenceCanceller,
  RecurrenceCreated,
  RecurrenceRequest,
  RecurrenceState,
  RecurrenceStatus,
  RecurringChargeRequest,
  RecurringChargeState,
  RecurringChargeStatus,
} from '../automatic-pix.port';
import { SANDBOX_PIX_KEY } from './sandbox-pix.provider';

interface RecurrenceRow {
  id: string;
  status: RecurrenceStatus;
  changed_at: Date;
  cancelled_by: RecurrenceCanceller | null;
  code: string | null;
}

interface ChargeRow {
  txid: string;
  recurrence_id: string;
  status: RecurringChargeStatus;
  due_date: string;
  amount_cents: string;
  attempts: ChargeAttempt[];
  paid_end_to_end_id: string | null;
  paid_at: Date | null;
}

/** What the payer's bank does with a charge's attempt in the sandbox. */
export type SandboxAttemptOutcome = 'PAID' | 'INSUFFICIENT_FUNDS';

/** The ISPB the sandbox's ids carry. */
const SANDBOX_ISPB = '00000000';
/** The BCB's rejection code the sandbox gives an attempt the payer's account could not pay (it fails the attempt, not the charge). */
const INSUFFICIENT_FUNDS_CODE = 'AM02';
const RETRIES_ALLOWED = 3;

const endToEndId = (date: string) => `E${SANDBOX_ISPB}${date.replace(/-/g, '')}${randomBytes(10).toString('hex').slice(0, 15)}`.padEnd(32, '0').slice(0, 32);

/**
 * The sandbox's Pix Automático: no PSP is called; recurrences and recurring charges are kept in the
 * sandbox's tables, and the payer's bank is played through the sandbox routes (authorize, reject,
 * revoke, an attempt paid or refused for insufficient funds) and by the scheduler route, which pays
 * every attempt due by its `now` that nothing else settled.
 */
@Injectable()
export class SandboxAutomaticPixProvider implements AutomaticPixProvider {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async createRecurrence(request: RecurrenceRequest): Promise<RecurrenceCreated> {
    const id = `RR${SANDBOX_ISPB}${brazilDate(new Date()).replace(/-/g, '')}${randomBytes(8).toString('hex').slice(0, 11)}`;
    const [row]: Array<{ id: string }> = await this.dataSource.query(
      `INSERT INTO sandbox_recurrences (id, contract, status, journey, first_charge_txid, amount_cents, period, first_date)
       VALUES ($1, $2, 'CRIADA', $3, $4, $5, $6, $7)
       ON CONFLICT (contract) DO UPDATE SET contract = EXCLUDED.contract RETURNING id`,
      [id, request.contract, request.journey.kind, request.journey.kind === 'JOURNEY_3' ? request.journey.firstChargeTxid : null, request.amountCents, request.period, request.firstDate],
    );
    // A static-style code with the recurrence's amount (journey 3 pays it now; journey 2 shows what each charge will be).
    const brCode = buildPixBrCode({
      key: SANDBOX_PIX_KEY,
      amountCents: request.amountCents,
      merchantName: 'SANDBOX PIX AUTOMATICO',
      merchantCity: 'SAO PAULO',
      txid: row.id.slice(-25),
    });
    return { recurrenceId: row.id, brCode };
  }

  async findRecurrence(recurrenceId: string): Promise<RecurrenceState | null> {
    const [row]: RecurrenceRow[] = await this.dataSource.query(`SELECT id, status, changed_at, cancelled_by, code FROM sandbox_recurrences WHERE id = $1`, [recurrenceId]);
    return row ? toRecurrence(row) : null;
  }

  async cancelRecurrence(recurrenceId: string): Promise<RecurrenceState> {
    await this.endRecurrence(recurrenceId, 'CANCELADA', 'USUARIO_RECEBEDOR', 'SLCR');
    return (await this.findRecurrence(recurrenceId)) as RecurrenceState;
  }

  async createRecurringCharge(request: RecurringChargeRequest): Promise<RecurringChargeState> {
    const attempts: ChargeAttempt[] = [{ date: request.dueDate, kind: 'AGND', status: 'AGENDADA', endToEndId: endToEndId(request.dueDate), failureCode: null }];
    await this.dataSource.query(
      `INSERT INTO sandbox_recurring_charges (txid, recurrence_id, status, due_date, amount_cents, attempts)
       SELECT $1, id, 'ATIVA', $3, $4, $5 FROM sandbox_recurrences WHERE id = $2 AND status = 'APROVADA'
       ON CONFLICT (txid) DO NOTHING`,
      [request.txid, request.recurrenceId, request.dueDate, request.amountCents, JSON.stringify(attempts)],
    );
    const charge = await this.findRecurringCharge(request.txid);
    if (!charge) throw new Error(`Sandbox: recurrence ${request.recurrenceId} is not authorized; recurring charge ${request.txid} refused`);
    return charge;
  }

  async findRecurringCharge(txid: string): Promise<RecurringChargeState | null> {
    const [row]: ChargeRow[] = await this.dataSource.query(`SELECT * FROM sandbox_recurring_charges WHERE txid = $1`, [txid]);
    return row ? toCharge(row) : null;
  }

  async requestRetry(txid: string, date: string): Promise<RecurringChargeState> {
    await this.updateCharge(txid, (charge) => {
      const retries = charge.attempts.filter((attempt) => attempt.kind === 'NTAG');
      const open = charge.attempts.some((attempt) => attempt.status === 'SOLICITADA' || attempt.status === 'AGENDADA');
      const limit = addDaysToDate(charge.due_date, 7);
      if (charge.status !== 'ATIVA' || open || retries.length >= RETRIES_ALLOWED || date > limit || charge.attempts.some((attempt) => attempt.date === date)) return null;
      return { attempts: [...charge.attempts, { date, kind: 'NTAG', status: 'AGENDADA', endToEndId: endToEndId(date), failureCode: null }] };
    });
    return (await this.findRecurringCharge(txid)) as RecurringChargeState;
  }

  async cancelRecurringCharge(txid: string): Promise<RecurringChargeState> {
    await this.updateCharge(txid, (charge) =>
      charge.status === 'ATIVA' && charge.attempts.every((attempt) => attempt.status === 'AGENDADA' && attempt.date > brazilDate(new Date()))
        ? { status: 'CANCELADA', attempts: charge.attempts.map((attempt) => ({ ...attempt, status: 'CANCELADA' as const })) }
        : null,
    );
    return (await this.findRecurringCharge(txid)) as RecurringChargeState;
  }

  // ---- the payer's bank (sandbox routes) ----

  /** The payer authorizes (APROVADA), rejects (REJEITADA), lets it expire (EXPIRADA) or revokes it later (CANCELADA by the payer). */
  async payerDecides(recurrenceId: string, decision: 'AUTHORIZE' | 'REJECT' | 'EXPIRE' | 'REVOKE'): Promise<boolean> {
    switch (decision) {
      case 'AUTHORIZE':
        return this.moveRecurrence(recurrenceId, ['CRIADA'], 'APROVADA', null, null);
      case 'REJECT':
        return this.moveRecurrence(recurrenceId, ['CRIADA'], 'REJEITADA', null, 'AP13');
      case 'EXPIRE':
        return this.moveRecurrence(recurrenceId, ['CRIADA'], 'EXPIRADA', null, null);
      case 'REVOKE':
        return this.endRecurrence(recurrenceId, 'CANCELADA', 'USUARIO_PAGADOR', 'SLDB');
    }
  }

  /** The recurrence whose journey 3 QR pays the immediate charge `txid` (the payer's bank approves both together). */
  async recurrenceOfFirstCharge(txid: string): Promise<string | null> {
    const [row]: Array<{ id: string }> = await this.dataSource.query(`SELECT id FROM sandbox_recurrences WHERE first_charge_txid = $1`, [txid]);
    return row?.id ?? null;
  }

  /**
   * The open attempt of a charge settled by the payer's bank: paid (the charge CONCLUIDA) or refused for
   * insufficient funds (the attempt REJEITADA; the charge EXPIRADA when no retry is left in its window).
   * False when it had no open attempt.
   */
  async settleAttempt(txid: string, outcome: SandboxAttemptOutcome, now: Date): Promise<boolean> {
    return this.updateCharge(txid, (charge) => {
      const open = charge.attempts.findIndex((attempt) => attempt.status === 'AGENDADA');
      if (charge.status !== 'ATIVA' || open < 0) return null;
      const attempts = charge.attempts.map((attempt, index) =>
        index !== open ? attempt : { ...attempt, status: outcome === 'PAID' ? ('PAGA' as const) : ('REJEITADA' as const), failureCode: outcome === 'PAID' ? null : INSUFFICIENT_FUNDS_CODE },
      );
      if (outcome === 'PAID') return { status: 'CONCLUIDA', attempts, paid_end_to_end_id: attempts[open].endToEndId, paid_at: now };
      const retries = attempts.filter((attempt) => attempt.kind === 'NTAG').length;
      const windowLeft = addDaysToDate(charge.due_date, 7) > brazilDate(now);
      return { status: retries < RETRIES_ALLOWED && windowLeft ? 'ATIVA' : 'EXPIRADA', attempts };
    });
  }

  /** Among `txids`, the charges with an attempt due by `now` and not settled: each paid (the payer's account has the money). */
  async collectDue(txids: string[], now: Date): Promise<string[]> {
    if (txids.length === 0) return [];
    const rows: ChargeRow[] = await this.dataSource.query(`SELECT * FROM sandbox_recurring_charges WHERE txid = ANY($1::varchar[]) AND status = 'ATIVA'`, [txids]);
    const today = brazilDate(now);
    const due = rows.filter((row) => row.attempts.some((attempt) => attempt.status === 'AGENDADA' && attempt.date <= today));
    const paid: string[] = [];
    for (const row of due) if (await this.settleAttempt(row.txid, 'PAID', now)) paid.push(row.txid);
    return paid;
  }

  private async moveRecurrence(id: string, from: RecurrenceStatus[], to: RecurrenceStatus, by: RecurrenceCanceller | null, code: string | null): Promise<boolean> {
    const [, affected]: [unknown, number] = await this.dataSource.query(
      `UPDATE sandbox_recurrences SET status = $3, cancelled_by = $4, code = $5, changed_at = now() WHERE id = $1 AND status = ANY($2::varchar[])`,
      [id, from, to, by, code],
    );
    return affected > 0;
  }

  private async endRecurrence(id: string, to: RecurrenceStatus, by: RecurrenceCanceller, code: string): Promise<boolean> {
    const ended = await this.moveRecurrence(id, ['CRIADA', 'APROVADA'], to, by, code);
    // Nothing more is collected under a recurrence that ended.
    await this.dataSource.query(`UPDATE sandbox_recurring_charges SET status = 'CANCELADA' WHERE recurrence_id = $1 AND status = 'ATIVA'`, [id]);
    return ended;
  }

  /** One charge changed under its row lock by `change` (null: left as it is); whether it changed. */
  private async updateCharge(txid: string, change: (charge: ChargeRow) => Partial<ChargeRow> | null): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const [row]: ChargeRow[] = await manager.query(`SELECT * FROM sandbox_recurring_charges WHERE txid = $1 FOR UPDATE`, [txid]);
      const changes = row ? change(row) : null;
      if (!changes) return false;
      const next = { ...row, ...changes };
      await manager.query(`UPDATE sandbox_recurring_charges SET status = $2, attempts = $3, paid_end_to_end_id = $4, paid_at = $5 WHERE txid = $1`, [
        txid,
        next.status,
        JSON.stringify(next.attempts),
        next.paid_end_to_end_id,
        next.paid_at,
      ]);
      return true;
    });
  }
}

function toRecurrence(row: RecurrenceRow): RecurrenceState {
  return { recurrenceId: row.id, status: row.status, changedAt: row.changed_at, cancelledBy: row.cancelled_by, code: row.code, description: null };
}

function toCharge(row: ChargeRow): RecurringChargeState {
  const amountCents: Cents = cents(Number(row.amount_cents));
  return {
    txid: row.txid,
    recurrenceId: row.recurrence_id,
    status: row.status,
    dueDate: row.due_date,
    amountCents,
    attempts: row.attempts,
    paid: row.paid_end_to_end_id && row.paid_at ? { endToEndId: row.paid_end_to_end_id, amountCents, paidAt: row.paid_at } : null,
  };
}
