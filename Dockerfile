# syntax=docker/dockerfile:1
# The service image: Node 24, production dependencies only, running as the unprivileged `node`
# user, with a health check on /healthz. Data (SQLite, generated keys) lives in the /data volume;
# set DATABASE_URL to use PostgreSQL instead (compose.yaml). Configuration: docs/operations.md.

# --- build stage: install production dependencies (better-sqlite3 compiles here if no prebuilt binary fits)
FROM node:24-bookworm-slim AS deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/ensure-native.mjs scripts/
RUN npm ci --omit=dev --no-audit --no-fund

# --- runtime stage: no compilers, no npm cache
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "bin/platform.js", "serve"]
