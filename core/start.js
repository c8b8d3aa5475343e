// The gateway's entry as `npm start` and the image run it: node's compile cache on, then core/main.ts.
// With the cache, every start after the first finds each TypeScript source already stripped and compiled, so node
// never loads its type-stripping compiler (amaro: WebAssembly and JavaScript that stay resident, ~17 MB, for the life
// of the process and of every cluster worker) and starts faster. `node core/main.ts` runs the same gateway without it.
// The cache lives in NODE_COMPILE_CACHE when set, else in the system's temp folder; a folder it cannot write only costs
// the saving. Plain JavaScript, so this file itself needs no stripping.
import module from 'node:module';

const cache = module.enableCompileCache?.();
// Worker threads (the embedded store's writer) and cluster workers read it from the environment as they start.
if (cache?.directory && !process.env.NODE_COMPILE_CACHE) process.env.NODE_COMPILE_CACHE = cache.directory;
await import('./main.ts');
// Started: what the cache holds for the modules loaded so far is written now, and node lets go of its copy (5.1 MB of
// malloc in use at idle, freed for the load to reuse). Modules loaded later are still cached.
module.flushCompileCache?.();
