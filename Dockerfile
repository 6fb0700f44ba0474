# railyard: the sandbox as a container. A build stage compiles the TypeScript and copies the
# stylesheets and scripts beside it (npm run build); the runtime stage runs the compiled JavaScript
# on the image's own Node 24, with production dependencies only. The `node@24` devDependency is not
# needed there.
#
#   docker build -t railyard .
#   docker run --rm -p 4010:4010 -v railyard-data:/data railyard
ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /build
COPY package.json package-lock.json ./
# @scarf/scarf (a pact-js dependency) phones home from its install script; npm < 11 would run it.
# --ignore-scripts: the image has Node 24 already, and the build runs below, once the sources are in.
RUN SCARF_ANALYTICS=false npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/ ./scripts/
COPY src/ ./src/
# npm run build: tsc, then scripts/copy-assets.mjs puts src/**/assets/ (the dashboard's and the
# hosted checkout's stylesheets and scripts) beside the compiled code in dist/.
RUN npm run build

FROM ${NODE_IMAGE}

ENV NODE_ENV=production \
    PORT=4010 \
    HOST=0.0.0.0 \
    RAILYARD_DB=/data/railyard.db

WORKDIR /app

# Dependencies first so the layer is cached until the lockfile changes. Installed as root and
# left root-owned: the app user can read them but not rewrite them.
COPY package.json package-lock.json ./
RUN SCARF_ANALYTICS=false npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    && npm cache clean --force

COPY bin/ ./bin/
COPY scenarios/ ./scenarios/
COPY --from=build /build/dist/ ./dist/

# The SQLite store lives on a volume the unprivileged user owns.
RUN mkdir -p /data && chown node:node /data
VOLUME /data

USER node

EXPOSE 4010

# slim has no curl: probe with Node's built-in fetch.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||4010)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"]

# Exec form: node is PID 1 and receives SIGTERM, which the server handles by draining requests.
# The heap flags: as in `npm start` and bin/railyard.mjs (docs/configuration.md, Memory).
CMD ["node", "--max-semi-space-size=16", "--heap-growing-percent=100", "dist/main.js", "serve"]
