// node:http, taken with require rather than import. An ESM import of node:http builds the module's namespace from all
// of its exports, which reads its lazy ones (WebSocket, CloseEvent, MessageEvent) and so loads node's bundled undici:
// 72 more internal modules, ~2.8 MB of heap in a process that loads nothing else and 1.7 MB in the gateway's (node 24,
// heap after start), for classes the gateway never uses. Required, the lazy exports stay unread. Types still come from the import.
import { createRequire } from 'node:module';

const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');

export const { createServer, request, STATUS_CODES } = http;
