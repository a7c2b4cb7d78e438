import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/**
 * The service runs with the same node flags however it is started: `npm start` (which the benchmarks
 * read, bench/production-node.js) and the container's CMD. The old-space limit among them is what keeps
 * V8's heap growth, and so the peak memory the README states, to what was measured (issue 24).
 */
describe('Production start', () => {
  it('runs node with the same flags in `npm start` and in the Dockerfile, an old-space limit among them', () => {
    const start = JSON.parse(read('package.json')).scripts.start as string;
    const startFlags = /\bnode((?: --\S+)*) dist\/src\/main\.js/.exec(start)?.[1].trim().split(' ');
    const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
    expect(cmd).toBeDefined();
    const dockerArgs = JSON.parse(cmd as string) as string[];
    expect(dockerArgs[0]).toBe('node');
    expect(dockerArgs[dockerArgs.length - 1]).toBe('dist/src/main.js');
    expect(dockerArgs.slice(1, -1)).toEqual(startFlags);
    expect(startFlags).toContainEqual(expect.stringMatching(/^--max-old-space-size=\d+$/));
  });
});
