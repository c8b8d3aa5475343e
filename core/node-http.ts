// node:http, taken with require rather than import. An ESM import of node:http builds the module's namespace from all
// of its exports, which reads its lazy ones (WebSocket, CloseEvent, MessageEvent) and so loads node's bundled undici:
// 72 more internal modules and ~2.8 MB of heap (node 24, measured against require) in every gateway process, for
// classes the gateway never uses. Required, the lazy exports stay unread. Types still come from the import.
import { createRequire } from 'node:module';

const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');

export const { createServer, request, STATUS_CODES } = http;
