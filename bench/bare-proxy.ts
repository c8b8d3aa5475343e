// Bare http-proxy-3 in front of the upstream: the floor any Node relay pays, to compare the gateway against.
import http from 'node:http';
import { createProxyServer } from 'http-proxy-3';

const target = process.argv[2] ?? process.env.BENCH_UPSTREAM_URL;
if (!target) {
  process.stderr.write('usage: node bench/bare-proxy.ts <upstream url>\n');
  process.exit(2);
}

const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 256 }); // no socket limit, as the gateway's default
const proxy = createProxyServer({ target, agent });
proxy.on('error', (err, _req, res) => {
  // Count failures as 502s in the load report instead of hanging the client until its timeout.
  if (res instanceof http.ServerResponse && !res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(err.message);
  else res.destroy();
});

const server = http.createServer((req, res) => proxy.web(req, res));
server.keepAliveTimeout = 60_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`http://127.0.0.1:${port}\n`);
});

process.stdin.on('end', () => process.exit(0)).resume();
