// node:http, taken with require rather than import: an ESM import reads its lazy exports (WebSocket, …) and so loads
// node's bundled undici, which the gateway never uses (docs/performance.md). Types still come from the import.
import { createRequire } from 'node:module';

const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');

export const { createServer, request, STATUS_CODES } = http;
