FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production DATA_DIR=/data
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY docker/entrypoint.sh ./docker/entrypoint.sh
# The image has no tsx, tsc or sources: `npm run token|rebuild|verify-billing` run the
# compiled commands here. DATA_DIR belongs to the user the app runs as, readable by it alone
# (a named volume mounted there takes this owner and mode when first created).
RUN npm pkg set \
      scripts.token="node dist/apps/control-plane/src/cli/token.js" \
      scripts.rebuild="node dist/apps/control-plane/src/cli/rebuild.js" \
      scripts.verify-billing="node dist/apps/control-plane/src/cli/verify-billing.js" \
    && install -d -o node -g node -m 0700 /data
# The node image's own unprivileged user (uid 1000).
USER node
EXPOSE 3000
# Ready, not merely live: the event store, read models and Redis answer (no curl needed).
HEALTHCHECK --interval=10s --timeout=5s --start-period=90s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# `token`, `rebuild` and `verify-billing` as the command run those CLIs (docker/entrypoint.sh).
ENTRYPOINT ["/bin/sh", "/app/docker/entrypoint.sh"]
CMD ["node", "--max-semi-space-size=32", "dist/apps/control-plane/src/main.js"]
