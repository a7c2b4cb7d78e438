/**
 * Runs `work` for every item, at most `limit` at a time, and resolves when all are done. `work` handles
 * its own errors: the first one it lets through rejects the run (the other workers go on with the rest).
 */
export async function forEachConcurrently<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next];
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
