# syntax=docker/dockerfile:1
# Build stage: full dependencies, compile TypeScript, then drop dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ormconfig.ts ./
COPY src ./src
COPY scripts ./scripts
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

# Runtime stage: production dependencies and compiled code only, as the unprivileged `node` user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node package.json openapi.json ./
RUN mkdir -p /data && chown node:node /data
# The `tms` command-line client (package bin), on the PATH: `docker run --rm <image> tms --help`.
RUN chmod 755 dist/src/cli/tms.js && ln -s /app/dist/src/cli/tms.js /usr/local/bin/tms
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM finishes in-flight requests, closes the pool and stops an embedded database.
STOPSIGNAL SIGTERM
CMD ["node", "--max-old-space-size=1024", "dist/src/main.js"]
