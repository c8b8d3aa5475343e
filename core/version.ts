// The gateway's version, package.json's, read once: `--version`, /healthz and the startup line say it.
import { readFileSync } from 'node:fs';

export const version: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
