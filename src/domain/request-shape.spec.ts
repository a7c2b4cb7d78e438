import { pathShapeProblem, requestShapeProblem } from './request-shape';

describe('request shape limits', () => {
  it('accepts ordinary bodies, accents and emoji included', () => {
    expect(requestShapeProblem({ customer: { name: 'João 😀' }, items: [{ title: 'Curso' }], metadata: { a: [1, 2, { b: null }] } })).toBeNull();
  });

  it('names the field holding a NUL or an unpaired surrogate, at any depth', () => {
    expect(requestShapeProblem({ customer: { name: 'a\u0000b' } })).toEqual({ field: 'customer.name', message: expect.stringMatching(/cannot be stored/) });
    expect(requestShapeProblem({ metadata: { notes: ['ok', 'x\ud800'] } })?.field).toBe('metadata.notes[1]');
    expect(requestShapeProblem({ metadata: { tail: 'x\udc00y' } })?.field).toBe('metadata.tail');
    expect(requestShapeProblem({ ['bad\u0000key']: 1 })?.message).toMatch(/field name/);
  });

  it('refuses deep nesting and huge arrays without walking them recursively', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i += 1) deep = { a: deep };
    expect(requestShapeProblem(deep)?.message).toMatch(/deeper than 16/);
    expect(requestShapeProblem({ items: Array.from({ length: 100_000 }, () => ({ title: 'x' })) })).toEqual({ field: 'items', message: 'must have at most 1000 entries' });
    expect(requestShapeProblem({ note: 'x'.repeat(100_001) })?.field).toBe('note');
  });

  it('refuses an object with more than 1000 fields, naming it, at the top or nested', () => {
    const fields = (count: number): Record<string, number> => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));
    expect(requestShapeProblem(fields(1000))).toBeNull();
    expect(requestShapeProblem(fields(60_000))).toEqual({ field: 'body', message: 'must have at most 1000 fields' });
    expect(requestShapeProblem({ metadata: { inner: fields(1001) } })).toEqual({ field: 'metadata.inner', message: 'must have at most 1000 fields' });
    expect(requestShapeProblem({ items: [{ title: 'x' }, fields(1001)] })?.field).toBe('items[1]');
  });

  it('refuses a path segment that decodes to a NUL, and leaves bad percent-encodings to the router', () => {
    expect(pathShapeProblem('/admin/api-keys/%00')).toEqual({ field: 'path', message: expect.stringMatching(/cannot be stored/) });
    expect(pathShapeProblem('/api/transactions/12')).toBeNull();
    expect(pathShapeProblem('/api/transactions/%E0%A4%A')).toEqual({ field: 'path', message: 'holds a malformed percent-encoding' });
    expect(pathShapeProblem('/health%ZZ')).toEqual({ field: 'path', message: 'holds a malformed percent-encoding' });
    expect(pathShapeProblem('/api/subscriptions/Jo%C3%A3o')).toBeNull();
  });
});
