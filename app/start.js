// The gateway's entry as `npm start` and the image run it: node's compile cache on, then app/main.ts.
// With the cache, every start after the first finds each TypeScript source already stripped and compiled, so node
// never loads its type-stripping compiler, which stays resident in every thread (docs/performance.md), and starts
// faster. `node app/main.ts` runs the same gateway without it.
// The cache lives in NODE_COMPILE_CACHE when set, else in the system's temp folder; a folder it cannot write only costs
// the saving. Plain JavaScript, so this file itself needs no stripping.
import module from 'node:module';
// First, before any .ts is imported: a Node too old to run the gateway says so in one line and exits 1.
import '../scripts/check-node.cjs';

// Two malloc arenas: glibc's arena per allocating thread keeps what that thread freed (docs/performance.md). glibc
// reads MALLOC_ARENA_MAX only as a process starts, so the gateway starts itself again with it (execve: same pid, same
// stdio) unless the environment names a value already (the image sets it; an operator's own value is kept). With
// another libc (musl) the variable means nothing and costs one exec; systems other than Linux skip this.
const linuxWithoutArenaMax = process.platform === 'linux' && process.env.MALLOC_ARENA_MAX === undefined;
if (linuxWithoutArenaMax && typeof process.execve === 'function') {
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], { ...process.env, MALLOC_ARENA_MAX: '2' });
  } catch {
    // Not replaced (a sandbox that forbids exec): the gateway runs with glibc's default arenas.
  }
}

const cache = module.enableCompileCache?.();
// Worker threads (the embedded store's writer) and cluster workers read it from the environment as they start.
if (cache?.directory && !process.env.NODE_COMPILE_CACHE) process.env.NODE_COMPILE_CACHE = cache.directory;
await import('./main.ts');
// Started: what the cache holds for the modules loaded so far is written now, and node lets go of its copy (freed for
// the load to reuse). Modules loaded later are still cached.
module.flushCompileCache?.();
