/** The build compiles TypeScript only; the dashboard's templates and CSS are copied next to its compiled code. */
const { cpSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
for (const folder of ['views', 'assets']) {
  cpSync(join(root, 'src/dashboard', folder), join(root, 'dist/src/dashboard', folder), { recursive: true });
}
