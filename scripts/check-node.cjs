// Stops `npm install` (preinstall) and `npm start` (app/start.js imports this first) at once on a Node older than the
// gateway needs, with one line, instead of npm's EBADENGINE lines and a stack trace for a .ts file. Plain CommonJS that
// any Node runs.
'use strict';
var NEEDED = [22, 18];
var have = process.versions.node.split('.').map(Number);
if (have[0] < NEEDED[0] || (have[0] === NEEDED[0] && have[1] < NEEDED[1])) {
  process.stderr.write('model-gateway needs Node ' + NEEDED.join('.') + ' or newer (it runs TypeScript by type stripping); this is Node ' + process.versions.node + ' at ' + process.execPath + '. Install a current Node from https://nodejs.org or with nvm: nvm install 24 && nvm use 24\n');
  process.exit(1);
}
