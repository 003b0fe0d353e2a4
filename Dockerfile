# Production image for both processes: the API (default command) and the worker
# (`node dist/src/worker.js`). Build: docker build -t tripwire-service .
FROM node:20-bookworm-slim AS build
WORKDIR /app
# npm ci's postinstall builds the console, so its sources come first.
COPY package.json package-lock.json ./
COPY tools/build-console.mjs tools/
COPY console console
# The receivers' verification package is a workspace, and the service signs with it.
COPY packages packages
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY workflows workflows
COPY activities activities
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--max-old-space-size=128", "dist/src/main.js"]
