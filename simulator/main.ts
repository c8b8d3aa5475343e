// CLI for `npm run simulator`: runs the simulated upstream until interrupted.
import { parseArgs } from 'node:util';
import { startSimulator } from './server.ts';

// A long-running demo process keeps only recent requests, so /_simulator/requests stays useful without growing forever.
const DEMO_MAX_RECORDED = 1000;

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4010' },
    host: { type: 'string', default: '127.0.0.1' },
    'chunk-delay-ms': { type: 'string', default: '0' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  console.log('usage: node simulator/main.ts [--port N] [--host H] [--chunk-delay-ms N]');
  process.exit(0);
}

const port = Number(values.port);
const chunkDelayMs = Number(values['chunk-delay-ms']);
if (!Number.isInteger(port) || port < 0 || port > 65535 || !(chunkDelayMs >= 0)) {
  console.error('simulator: --port must be 0-65535 and --chunk-delay-ms a non-negative number');
  process.exit(2);
}

const simulator = await startSimulator({ port, host: values.host, chunkDelayMs, maxRecorded: DEMO_MAX_RECORDED });
console.log(`simulator listening on ${simulator.url}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    simulator.close().then(() => process.exit(0), () => process.exit(1));
  });
}
