// Command line: start the gateway on a config file (one process or a cluster of workers), or --check it and exit.
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { serveClusterMetrics } from './cluster-metrics.ts';
import { loadConfig, ConfigError } from './config.ts';
import { formats, plugins, upstreamAuth } from './registry.ts';
import { startGateway } from './server.ts';
import { createLogger } from './log.ts';

const { values } = parseArgs({
  options: {
    config: { type: 'string', short: 'c', default: './gateway.yaml' },
    check: { type: 'boolean', default: false },
    port: { type: 'string' },
    host: { type: 'string' },
  },
});
const configFile = values.config!;
const log = createLogger();

/** Validate the config; returns the number of workers to run, 0 when invalid. */
function check(announce: boolean): number {
  try {
    const { config, warnings } = loadConfig(configFile, { plugins, formats, upstreamAuth });
    for (const w of warnings) console.error(`warning: ${w}`);
    if (announce) console.log(`${configFile}: ok`);
    const w = config.server.workers;
    return w === 'auto' ? availableParallelism() : w;
  } catch (err) {
    console.error(err instanceof ConfigError ? err.problems.join('\n') : String(err));
    return 0;
  }
}

async function serve(): Promise<void> {
  try {
    const gateway = await startGateway({ configFile, log, port: values.port ? Number(values.port) : undefined, host: values.host });
    const stop = async (signal: string) => {
      log.info({ signal }, 'draining');
      await gateway.close();
      process.exit(0);
    };
    process.once('SIGTERM', () => void stop('SIGTERM'));
    process.once('SIGINT', () => void stop('SIGINT'));
    process.on('SIGHUP', () => void gateway.reload());
  } catch (err) {
    if (err instanceof ConfigError) console.error(err.problems.join('\n'));
    else log.fatal({ err }, 'failed to start');
    process.exit(1);
  }
}

if (values.check) {
  process.exit(check(true) > 0 ? 0 : 1);
} else if (cluster.isPrimary) {
  const workers = check(false);
  if (workers === 0) process.exit(1);
  if (workers === 1) await serve();
  else {
    // Workers share the listening socket; the primary only forwards signals and replaces crashed workers.
    log.info({ workers }, 'starting workers');
    serveClusterMetrics();
    let stopping = false;
    for (let i = 0; i < workers; i++) cluster.fork();
    cluster.on('exit', (worker, code) => {
      if (stopping) { if (!Object.keys(cluster.workers ?? {}).length) process.exit(0); return; }
      log.warn({ pid: worker.process.pid, code }, 'worker exited; replacing');
      cluster.fork();
    });
    const forward = (signal: NodeJS.Signals) => () => {
      if (signal !== 'SIGHUP') stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill(signal);
    };
    for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(s, forward(s));
  }
} else {
  await serve();
}
