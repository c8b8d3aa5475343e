// Node's built-in SQLite (node:sqlite), loaded without the ExperimentalWarning some Node versions print for it.
import { createRequire } from 'node:module';

type Sqlite = typeof import('node:sqlite');
let loaded: Sqlite | undefined;

/** node:sqlite, without the ExperimentalWarning Node 22 prints as it loads (that one warning only). */
export function sqlite(): Sqlite {
  if (loaded) return loaded;
  const emit = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type ?? (warning as Error).name;
    const text = typeof warning === 'string' ? warning : warning.message;
    if (type === 'ExperimentalWarning' && /sqlite/i.test(text)) return;
    return (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    loaded = createRequire(import.meta.url)('node:sqlite') as Sqlite;
    return loaded;
  } finally {
    process.emitWarning = emit;
  }
}
