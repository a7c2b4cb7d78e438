import { addDays, boletoDueDate, brazilDate, endOfBrazilDay } from './dates';

describe('dates', () => {
  it('reads dates in Brazil (UTC-3)', () => {
    expect(brazilDate(new Date('2026-11-22T02:59:59.999Z'))).toBe('2026-11-21');
    expect(brazilDate(new Date('2026-11-22T03:00:00.000Z'))).toBe('2026-11-22');
  });

  it('ends a Brazilian day at 03:00 UTC of the next day', () => {
    expect(endOfBrazilDay('2026-11-25').toISOString()).toBe('2026-11-26T03:00:00.000Z');
  });

  it('makes a boleto due N days later, expiring when that day ends in Brazil', () => {
    expect(boletoDueDate(new Date('2026-11-22T13:00:00Z'), 3)).toEqual({
      dueDate: '2026-11-25',
      expiresAt: new Date('2026-11-26T03:00:00.000Z'),
    });
    // 23:30 in Brazil on the 22nd is already the 23rd in UTC
    expect(boletoDueDate(new Date('2026-11-23T02:30:00Z'), 1).dueDate).toBe('2026-11-23');
  });

  it('adds whole days', () => {
    expect(addDays(new Date('2026-11-22T13:00:00Z'), 7).toISOString()).toBe('2026-11-29T13:00:00.000Z');
  });
});
