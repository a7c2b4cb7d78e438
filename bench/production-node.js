'use strict';
/**
 * The node flags the service runs with in production, read from `npm start` (package.json), so that the
 * benchmarks start the service as it is deployed (the Dockerfile's CMD carries the same flags; the
 * deployment test checks they agree).
 */
const fs = require('node:fs');
const path = require('node:path');

function productionNodeFlags() {
  const { scripts } = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
  const match = /\bnode((?: --\S+)*) dist\/src\/main\.js/.exec(scripts.start);
  if (!match) throw new Error(`package.json's start script does not run node … dist/src/main.js: ${scripts.start}`);
  return match[1].split(' ').filter(Boolean);
}

module.exports = { productionNodeFlags };
