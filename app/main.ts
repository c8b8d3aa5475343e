// Command line: start the gateway on a config file (one process or a cluster of workers), or --check it and exit.
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { serveClusterMetrics } from '../core/cluster-metrics.ts';
import { loadConfig, logConfigNotes, ConfigError, type Loaded } from '../core/config.ts';
import { printConfig } from '../core/config-print.ts';
import { createLogger } from '../core/log.ts';
import { version } from '../core/version.ts';
import { startGateway } from './gateway.ts';
import { credentialSources, defaults, formats, kinds, plugins, simulator, upstreamAuth } from './registry.ts';

const USAGE = `Usage: npm start -- [options]   (or: node app/start.js [options])

Serves the LLM model gateway on a config file.

Options:
  -c, --config FILE  the config file (default: ./gateway.yaml)
      --check        validate the config and exit: quiet when it is good, its problems and exit 1 when not
      --print-config print the effective config (the file over the shipped defaults, as YAML, each section, route and
                     pipeline with where it came from, secrets masked) and exit; its problems and exit 1 when not good
      --port N       listen on port N (default: the config's server.port; the shipped file reads PORT, else 8080)
      --host ADDR    listen on ADDR (default: the config's server.host)
  -h, --help         print this help and exit
  -v, --version      print the version and exit

Environment: LOG_LEVEL (trace, debug, info, warn, error; default info), and the variables the config names.
`;

const OPTIONS = {
  config: { type: 'string', short: 'c', default: './gateway.yaml' },
  check: { type: 'boolean', default: false },
  'print-config': { type: 'boolean', default: false },
  port: { type: 'string' },
  host: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', short: 'v', default: false },
} as const;

/** The command line read; a flag it does not know (or a missing value) prints the usage and exits 2, as CLIs do. */
function readArgs() {
  try {
    return parseArgs({ options: OPTIONS }).values;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
}

const values = readArgs();
if (values.help) { process.stdout.write(USAGE); process.exit(0); }
if (values.version) { process.stdout.write(`${version}\n`); process.exit(0); }
const configFile = values.config!;
const deps = { plugins, formats, upstreamAuth, kinds, credentialSources, defaults };
// Under `workers: N` every line of a worker names it: the cluster's lines share one output.
const log = cluster.isWorker ? createLogger().child({ worker: cluster.worker!.id }) : createLogger();

/** The config loaded, or undefined once its problems are printed. */
function load(): Loaded | undefined {
  try {
    return loadConfig(configFile, deps);
  } catch (err) {
    console.error(err instanceof ConfigError ? err.problems.join('\n') : String(err));
    return undefined;
  }
}

/** Validate the config: its warnings and the number of workers to run, or undefined once its problems are printed. */
function check(): { loaded: Loaded; warnings: string[]; workers: number; simulator: boolean } | undefined {
  const loaded = load();
  if (!loaded) return undefined;
  const { config, warnings } = loaded;
  const w = config.server.workers;
  return { loaded, warnings, workers: w === 'auto' ? availableParallelism() : w, simulator: Object.values(config.platforms).some((p) => p.simulator) };
}

/** A cluster's workers do not log the config's warnings: the primary does, once per start or reload. */
function warnOnce(): void {
  try {
    logConfigNotes(log, loadConfig(configFile, deps));
  } catch { /* a file that does not load: every worker logs its problems as it keeps its running config */ }
}

/** One line for a port another process holds: which, and how to pick another. */
const portTaken = (err: { port?: number; address?: string }): string =>
  `port ${err.port} on ${err.address} is in use by another process: stop it, or pick another port with --port N (or PORT=N with the shipped gateway.yaml)`;

async function serve(configWarnings: boolean): Promise<void> {
  try {
    const gateway = await startGateway({ configFile, log, configWarnings, port: values.port ? Number(values.port) : undefined, host: values.host });
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
    else if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') console.error(portTaken(err as NodeJS.ErrnoException & { port?: number; address?: string }));
    else log.fatal({ err }, 'failed to start');
    process.exit(1);
  }
}

if (values['print-config']) {
  // The YAML alone on stdout (it can be saved or diffed); warnings and problems on stderr.
  const loaded = load();
  for (const w of loaded?.warnings ?? []) console.error(`warning: ${w}`);
  if (loaded) process.stdout.write(printConfig(loaded.layout));
  process.exit(loaded ? 0 : 1);
} else if (values.check) {
  // Quiet when the file is good: only warnings and problems are printed.
  const checked = check();
  for (const w of checked?.warnings ?? []) console.error(`warning: ${w}`);
  // The modules the config will run, loaded as a start would (the image fills its compile cache with --check).
  if (checked?.simulator) await simulator();
  process.exit(checked ? 0 : 1);
} else if (cluster.isPrimary) {
  const checked = check();
  if (!checked) process.exit(1);
  // One process: the server logs the config's warnings as it loads it.
  if (checked.workers === 1) await serve(true);
  else {
    // Workers share the listening socket; the primary only forwards signals and replaces crashed workers.
    log.info({ workers: checked.workers }, 'starting workers');
    logConfigNotes(log, checked.loaded);
    serveClusterMetrics();
    let stopping = false;
    for (let i = 0; i < checked.workers; i++) cluster.fork();
    cluster.on('exit', (worker, code) => {
      if (stopping) { if (!Object.keys(cluster.workers ?? {}).length) process.exit(0); return; }
      log.warn({ pid: worker.process.pid, code }, 'worker exited; replacing');
      cluster.fork();
    });
    const forward = (signal: NodeJS.Signals) => () => {
      if (signal !== 'SIGHUP') stopping = true;
      else warnOnce();
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill(signal);
    };
    for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(s, forward(s));
  }
} else {
  await serve(false);
}
