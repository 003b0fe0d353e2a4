# Production image for both processes: the API (default command) and the worker
# (`node dist/src/worker.js`), and the operator commands (`node dist/src/admin.cli.js`).
# Build: docker build -t tripwire-service .
# Health checks are per service in docker-compose.yml: the API answers /readyz on PORT, the worker
# /healthz on WORKER_METRICS_PORT, so one image-wide check would fail for one of them.
FROM node:24-bookworm-slim AS build
WORKDIR /app
# npm ci's postinstall builds the console, so its sources come first.
COPY package.json package-lock.json .npmrc ./
COPY tools/build-console.mjs tools/
COPY console console
# The receivers' verification package is a workspace, and the service signs with it.
COPY packages packages
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY workflows workflows
COPY activities activities
COPY tools/build-webhook-verify.mjs tools/
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
# The tripwire journal (TRIPWIRE_JOURNAL_DIR): hits are written here before they are answered.
# .keys: the evidence signing key the compose file's evidence-key job keeps (its volume starts as
# this folder, so owned by the user the job runs as).
RUN mkdir -p .data/tripwire-journal .keys && chown -R node:node .data .keys
USER node
# API, tripwire listener, decoy mail listener, worker metrics and health.
EXPOSE 8080 8081 2525 9464
CMD ["node", "--max-old-space-size=128", "--max-semi-space-size=16", "dist/src/main.js"]
