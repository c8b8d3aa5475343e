// /metrics under `workers: N`: every worker counts only its own requests, and a scrape reaches one worker at random. The
// worker that gets the scrape asks the primary, which gathers every worker's registry and sums them (prom-client's
// AggregatorRegistry; a gauge read from the shared store says `aggregator: 'max'`, so it is not multiplied by N).
import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

const ASK = 'gateway:metrics?';
const ANSWER = 'gateway:metrics';
const TIMEOUT_MS = 5_000;

interface Answer { type: typeof ANSWER; id: number; text?: string; error?: string }

/** Primary: answers workers' requests for the cluster's metrics. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== ASK) return;
    const reply = (answer: Omit<Answer, 'type' | 'id'>) => { if (worker.isConnected()) worker.send({ type: ANSWER, id: message.id, ...answer }); };
    aggregator.clusterMetrics().then((text) => reply({ text }), (err: Error) => reply({ error: err.message }));
  });
}

/** The metrics text a scrape gets: the whole cluster's in a worker, else this process's own. */
export function metricsText(registry: Registry): () => Promise<string> {
  if (!cluster.isWorker) return () => registry.metrics();
  AggregatorRegistry.setRegistries([registry]);
  void new AggregatorRegistry(); // makes this worker answer the primary's collection requests
  let next = 0;
  const waiting = new Map<number, (answer: Answer) => void>();
  process.on('message', (message: Answer) => {
    if (message?.type === ANSWER) waiting.get(message.id)?.(message);
  });
  return () => new Promise<string>((resolve, reject) => {
    const id = next++;
    const timer = setTimeout(() => { waiting.delete(id); reject(new Error('the primary did not answer with the cluster metrics')); }, TIMEOUT_MS);
    waiting.set(id, (answer) => {
      clearTimeout(timer);
      waiting.delete(id);
      if (answer.text !== undefined) resolve(answer.text);
      else reject(new Error(answer.error ?? 'no metrics'));
    });
    process.send!({ type: ASK, id });
  });
}
