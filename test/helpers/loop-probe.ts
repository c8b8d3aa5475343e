// Preloaded into a gateway process (node --import): prints `loop-probe <ms>` on stdout for every turn of the event loop
// (between two ticks of a 2 ms timer) that took more than 10 ms of the main thread's CPU time. CPU time, not wall time:
// a busy machine that deschedules the process adds nothing, only work that kept the loop from turning counts.
let last = process.threadCpuUsage();
setInterval(() => {
  const now = process.threadCpuUsage();
  const ms = (now.user - last.user + now.system - last.system) / 1000;
  last = now;
  if (ms > 10) process.stdout.write(`loop-probe ${ms.toFixed(1)}\n`);
}, 2).unref();
