'use strict';
/**
 * The node flags the service runs with in production, read from `npm start` (package.json), so that the
 * benchmarks start the service as it is deployed (the Dockerfile's CMD carries the same flags; the
 * deployment test checks they agree).
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

function productionNodeFlags() {
  const { scripts } = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
  const match = /\bnode((?: --\S+)*) dist\/src\/main\.js/.exec(scripts.start);
  if (!match) throw new Error(`package.json's start script does not run node … dist/src/main.js: ${scripts.start}`);
  return match[1].split(' ').filter(Boolean);
}

/**
 * A bench script started again with the production flags as the service's process (`args` tell it to
 * serve); resolves once it prints its `{"url": …}` line, with the process and that URL.
 */
function startServer(args) {
  return new Promise((resolve, reject) => {
    const server = spawn(process.execPath, [...productionNodeFlags(), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    server.stdout.on('data', (chunk) => {
      stdout += chunk;
      const line = stdout.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) resolve({ process: server, url: JSON.parse(line).url });
    });
    server.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

module.exports = { productionNodeFlags, startServer };
