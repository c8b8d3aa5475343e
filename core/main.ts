// Command line: start the gateway on a config file, or --check it and exit.
import { parseArgs } from 'node:util';
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

if (values.check) {
  try {
    const { warnings } = loadConfig(configFile, { plugins, formats, upstreamAuth });
    for (const w of warnings) console.error(`warning: ${w}`);
    console.log(`${configFile}: ok`);
    process.exit(0);
  } catch (err) {
    console.error(err instanceof ConfigError ? err.problems.join('\n') : String(err));
    process.exit(1);
  }
}

const log = createLogger();
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
