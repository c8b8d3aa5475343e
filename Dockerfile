# The gateway's image: Node 24 runs the TypeScript sources itself (type stripping, no build step), with production
# dependencies only, as the unprivileged `node` user, and node as PID 1 so a SIGTERM drains the requests in flight.
FROM node:24-slim

WORKDIR /app
ENV NODE_ENV=production
# Two malloc arenas, as app/start.js sets them when the environment names none (docs/operate.md, "Memory").
ENV MALLOC_ARENA_MAX=2

# Dependencies first, so a code change does not reinstall them. None needs an install script.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

COPY . .

# Node's compile cache (app/start.js), filled here with the flags of the ENTRYPOINT: from the first start, node finds
# the sources already stripped of their types and compiled, and never loads its TypeScript stripper (~17 MB resident).
# Owned by the user that runs, so the one module --check does not load (the embedded store's writer thread) is added.
ENV NODE_COMPILE_CACHE=/app/.compile-cache
RUN node --max-semi-space-size=16 app/start.js --check --config gateway.yaml && chown -R node:node /app/.compile-cache

# The embedded store's data folder (store.path, default ./data/gateway.db). Mount a volume here, or set store.redis
# (REDIS_URL) for several replicas; with Redis nothing is written here.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]

USER node
# The shipped gateway.yaml listens on ${PORT:-8080}.
EXPOSE 8080

# /healthz answers while the process serves. The slim image has no curl: node's own fetch asks.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# node itself, never `npm start`: npm does not pass SIGTERM on. The drain waits up to 10 s for requests in flight, so
# give the container more than that to stop (docker stop -t 15; compose stop_grace_period; Kubernetes' default is 30 s).
# The young generation as `npm start` sizes it (docs/operate.md, "Memory").
ENTRYPOINT ["node", "--max-semi-space-size=16", "app/start.js"]
# Another config: mount it and pass `--config /path/gateway.yaml`.
CMD ["--config", "gateway.yaml"]
