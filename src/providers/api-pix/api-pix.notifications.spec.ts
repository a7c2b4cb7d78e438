import fc from 'fast-check';
import { notifiedAutomaticIds, notifiedEndToEndIds, notifiedPixObjects } from './api-pix.notifications';

const e2eId = 'E12345678202611251200abcdefghijk';

describe('notifiedEndToEndIds (the PSP notification body)', () => {
  it('keeps the end-to-end ids of a BCB callback, in order, and nothing else of it', () => {
    const body = { pix: [{ endToEndId: e2eId, txid: 'x', valor: '1.00', horario: '2026-11-25T10:00:00Z' }, { endToEndId: 'E9'.padEnd(32, '0') }] };
    expect(notifiedEndToEndIds(body)).toEqual([e2eId, 'E9'.padEnd(32, '0')]);
    expect(notifiedEndToEndIds({ pix: [] })).toEqual([]);
  });

  it('refuses what is not a callback: no list, an id of the wrong shape, too many Pix', () => {
    for (const body of [null, 'pix', [], {}, { pix: 'x' }, { pix: [null] }, { pix: [{}] }, { pix: [{ endToEndId: 12 }] }, { pix: [{ endToEndId: `${e2eId}x` }] }, { pix: [{ endToEndId: "E' OR 1=1 --".padEnd(32, 'a') }] }]) {
      expect(notifiedEndToEndIds(body)).toBeNull();
    }
    expect(notifiedEndToEndIds({ pix: Array.from({ length: 100 }, () => ({ endToEndId: e2eId })) })).toHaveLength(100);
    expect(notifiedEndToEndIds({ pix: Array.from({ length: 101 }, () => ({ endToEndId: e2eId })) })).toBeNull();
  });

  it('never throws, and what it keeps is always 32 letters and digits', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.record({ pix: fc.array(fc.oneof(fc.anything(), fc.record({ endToEndId: fc.oneof(fc.string(), fc.stringMatching(/^[a-zA-Z0-9]{32}$/)) }))) })), (body) => {
        const ids = notifiedEndToEndIds(body);
        return ids === null || ids.every((id) => /^[a-zA-Z0-9]{32}$/.test(id));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('notifiedAutomaticIds (Pix Automático callbacks)', () => {
  it('keeps the idRec of /rec and the txid of /cobr, and refuses anything else', () => {
    expect(notifiedAutomaticIds('rec', { recs: [{ idRec: 'RR1234567820240115abcdefghijk', status: 'APROVADA' }] })).toEqual(['RR1234567820240115abcdefghijk']);
    expect(notifiedAutomaticIds('cobr', { cobsr: [{ txid: 'GWREC000000000000000000042', idRec: 'x' }] })).toEqual(['GWREC000000000000000000042']);
    expect(notifiedAutomaticIds('rec', { cobsr: [] })).toBeNull();
    expect(notifiedAutomaticIds('cobr', { cobsr: [{ txid: 'short' }] })).toBeNull();
    expect(notifiedAutomaticIds('rec', { recs: [{ idRec: "RR' OR 1=1 --aaaaaaaaaaaaaaaaa" }] })).toBeNull();
    fc.assert(fc.property(fc.anything(), (body) => { const ids = notifiedAutomaticIds('rec', body); return ids === null || ids.every((id) => /^[a-zA-Z0-9]{29}$/.test(id)); }));
  });
});

describe('notifiedPixObjects (a /pix callback with Efí’s sends, issue 38)', () => {
  const sent = { provider: 'efi' };
  const solicitacao = (idEnvio: unknown, extra: Record<string, unknown> = {}) => ({ endToEndId: 'E0908935620261128', tipo: 'SOLICITACAO', status: 'NAO_REALIZADO', gnExtras: { idEnvio, ...extra } });

  it('names a received Pix by its end-to-end id and one of the gateway’s sends by its reference, with the reason Efí gives', () => {
    const body = { pix: [{ endToEndId: e2eId }, solicitacao('GWSAQUE42', { erro: { codigo: 'AC03', origem: 'PSP do usuário recebedor', motivo: 'Conta inválida' } })] };
    expect(notifiedPixObjects(body, sent)).toEqual([{ id: e2eId }, { id: 'GWSAQUE42', kind: 'payout', provider: 'efi', note: 'AC03: Conta inválida: PSP do usuário recebedor' }]);
  });

  it('leaves a send the gateway did not make to reconciliation, refuses a malformed idEnvio, and without Efí reads only received Pix', () => {
    expect(notifiedPixObjects({ pix: [solicitacao('SOMEONEELSE7')] }, sent)).toEqual([{ id: 'SOMEONEELSE7', kind: 'payout', provider: 'efi' }]);
    expect(notifiedPixObjects({ pix: [solicitacao('GWSAQUE-42')] }, sent)).toBeNull();
    expect(notifiedPixObjects({ pix: [solicitacao('GWSAQUE42')] }, null)).toBeNull();
    expect(notifiedPixObjects({ pix: [{ endToEndId: e2eId }] }, null)).toEqual([{ id: e2eId }]);
  });
});
