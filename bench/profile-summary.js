'use strict';
/**
 * Reads a .cpuprofile (node --cpu-prof, or BENCH_CPU_PROF of npm run bench) and prints where the time went:
 * self time per package (node_modules/<name>, the service's dist/, node's internals) and the top functions.
 * Usage: node bench/profile-summary.js <file.cpuprofile> [top=25]
 */
const fs = require('node:fs');

const [file, topArg] = process.argv.slice(2);
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const top = Number(topArg || 25);
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMicros = new Map();
for (let i = 0; i < profile.samples.length; i += 1) {
  const id = profile.samples[i];
  selfMicros.set(id, (selfMicros.get(id) || 0) + (profile.timeDeltas[i] || 0));
}
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);

function packageOf(url) {
  if (!url) return '(native/vm)';
  const match = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
  if (match) return match[1];
  if (url.includes('/dist/src/')) return 'service (dist/src)';
  if (url.startsWith('node:')) return 'node:internal';
  return url;
}

const byPackage = new Map();
const byFunction = new Map();
for (const [id, micros] of selfMicros) {
  const frame = byId.get(id).callFrame;
  const name = frame.functionName || '(anonymous)';
  if (name === '(idle)' || name === '(program)' || name === '(garbage collector)') {
    byPackage.set(name, (byPackage.get(name) || 0) + micros);
    continue;
  }
  const pkg = packageOf(frame.url);
  byPackage.set(pkg, (byPackage.get(pkg) || 0) + micros);
  const key = `${name}  ${frame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/')}:${frame.lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) || 0) + micros);
}
const pct = (micros) => `${((micros / total) * 100).toFixed(1).padStart(5)} %`;
console.log(`${(total / 1e6).toFixed(1)} s sampled\n\nSelf time by package:`);
for (const [name, micros] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(micros)}  ${name}`);
console.log('\nSelf time by function:');
for (const [name, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(micros)}  ${name}`);
