import { forEachConcurrently } from './concurrency';

describe('forEachConcurrently', () => {
  it('runs every item once, never more than `limit` at a time', async () => {
    let running = 0;
    let peak = 0;
    const done: number[] = [];
    await forEachConcurrently([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 5 * (item % 3)));
      done.push(item);
      running -= 1;
    });
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(peak).toBe(3);
  });

  it('does nothing for no items, and rejects with the error a piece of work lets through', async () => {
    await forEachConcurrently([], 4, () => Promise.reject(new Error('never called')));
    await expect(forEachConcurrently([1, 2], 2, async (item) => {
      if (item === 2) throw new Error('boom');
    })).rejects.toThrow('boom');
  });

  it('starts nothing more after a failure, and rejects only once the work under way has ended', async () => {
    const started: number[] = [];
    let slowEnded = false;
    const run = forEachConcurrently([1, 2, 3, 4, 5, 6], 2, async (item) => {
      started.push(item);
      if (item === 1) {
        await new Promise((resolve) => setTimeout(resolve, 30));
        slowEnded = true;
      } else if (item === 2) {
        throw new Error('first');
      } else {
        throw new Error('never reached');
      }
    });
    await expect(run).rejects.toThrow('first');
    expect(slowEnded).toBe(true);
    expect(started).toEqual([1, 2]);
  });
});
