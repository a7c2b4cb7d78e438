#!/usr/bin/env node
/**
 * The npm registry reachable from our machines serves only the linux builds of platform-specific
 * optional packages (msgpackr-extract's, unrs-resolver's...). `npm install` then writes a lockfile
 * without the other platforms' entries, and `npm ci` refuses that lockfile as out of sync.
 * This adds each missing optional platform package back as an entry with its version, os and cpu,
 * so `npm ci` accepts the lockfile and skips those packages on platforms they are not for.
 * Run `npm run lock:complete` after every `npm install` that changes package-lock.json.
 */
const fs = require('node:fs');

const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openbsd', 'netbsd', 'sunos', 'aix', 'openharmony'];
const CPU = ['arm64', 'x64', 'arm', 'ia32', 'loong64', 'ppc64', 'riscv64', 's390x', 'mips64el'];
const ARM_ABIS = ['eabi', 'gnueabihf', 'musleabihf'];

const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
const packages = lock.packages;
let added = 0;
for (const [path, meta] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const nested = path ? `${path}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[nested] || packages[`node_modules/${name}`]) continue;
    const parts = name.split('/').pop().split('-');
    const os = parts.find((part) => OS.includes(part));
    const cpu = parts.find((part) => CPU.includes(part)) ?? (parts.some((part) => ARM_ABIS.includes(part)) ? 'arm' : undefined);
    if (!os && !cpu) continue; // not a platform build: leave it for npm to resolve
    packages[`node_modules/${name}`] = { version, optional: true, ...(os ? { os: [os] } : {}), ...(cpu ? { cpu: [cpu] } : {}) };
    added += 1;
  }
}
fs.writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: ${added} platform entries added`);
