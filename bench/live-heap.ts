// The soak's leak figure: a running gateway's live heap, what a full collection leaves. Its inspector is opened the
// way `kill -USR1` opens it (on the port its --inspect-port names: nothing listens before), then, over the Chrome
// DevTools Protocol: HeapProfiler.collectGarbage (a full, compacting collection) and Runtime.getHeapUsage. A heap
// sampled between collections is a sawtooth (the young generation swings between scavenges, the old one by what waits
// for the next mark-compact), so only this tells a leak from where the samples fell.
import { setTimeout as sleep } from 'node:timers/promises';

interface Pending { resolve(v: unknown): void; reject(e: Error): void }

export class LiveHeap {
  readonly #ws: WebSocket;
  readonly #pending = new Map<number, Pending>();
  #next = 1;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.addEventListener('message', (e) => {
      const m = JSON.parse(String(e.data)) as { id?: number; result?: unknown; error?: { message: string } };
      const p = m.id === undefined ? undefined : this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id!);
      if (m.error) p.reject(new Error(m.error.message));
      else p.resolve(m.result);
    });
    ws.addEventListener('close', () => {
      for (const p of this.#pending.values()) p.reject(new Error('inspector connection closed'));
      this.#pending.clear();
    });
  }

  /** Opens process `pid`'s inspector (started with --inspect-port=`port`) and connects to it. */
  static async open(pid: number, port: number, timeoutMs = 10_000): Promise<LiveHeap> {
    process.kill(pid, 'SIGUSR1');
    const deadline = Date.now() + timeoutMs;
    let url: string | undefined;
    while (!url) {
      try {
        const list = await (await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(1000) })).json() as { webSocketDebuggerUrl: string }[];
        url = list[0]?.webSocketDebuggerUrl;
      } catch {
        // not listening yet
      }
      if (!url) {
        if (Date.now() > deadline) throw new Error(`inspector of ${pid} not listening on ${port} within ${timeoutMs} ms`);
        await sleep(100);
      }
    }
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve(), { once: true });
      ws.addEventListener('error', () => reject(new Error(`inspector of ${pid}: no WebSocket at ${url}`)), { once: true });
    });
    return new LiveHeap(ws);
  }

  #call(method: string, timeoutMs: number): Promise<unknown> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.#pending.delete(id); reject(new Error(`${method}: no answer within ${timeoutMs} ms`)); }, timeoutMs);
      this.#pending.set(id, {
        resolve: (v) => { clearTimeout(timer); resolve(v); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      this.#ws.send(JSON.stringify({ id, method }));
    });
  }

  /** Bytes of V8 heap in use right after a full collection; null when the process did not answer. */
  async bytes(timeoutMs = 10_000): Promise<number | null> {
    try {
      await this.#call('HeapProfiler.collectGarbage', timeoutMs);
      const usage = await this.#call('Runtime.getHeapUsage', timeoutMs) as { usedSize: number };
      return usage.usedSize;
    } catch {
      return null;
    }
  }

  close(): void { this.#ws.close(); }
}
